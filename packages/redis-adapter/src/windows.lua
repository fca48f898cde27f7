-- The rolling windows of one API key (core RollingWindows.ts, the same algorithm), run
-- atomically by Redis: KEYS[1] the minute's admission times (a list, oldest first), KEYS[2] the
-- day's per-minute buckets ("minute:count:last", oldest first), KEYS[3] a hash of the day's
-- total and the latest time counted. ARGV: now in ms ("" = the Redis server's clock), the
-- per-minute limit, the daily ceiling, "hit" (check and count) or "peek" (count nothing).
-- Returns admitted (0/1), minute used, ms until the minute's oldest leaves, day used, ms until
-- the day's oldest bucket leaves, ms until a request would be admitted (0 when admitted).
local MINUTE, DAY = 60000, 86400000
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local perMinute, daily, hit = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == 'hit'
local latest = tonumber(redis.call('HGET', KEYS[3], 'latest') or '0')
if latest > now then now = latest end
local function int(x) return string.format('%.0f', x) end
local function bucket(s)
  local m, c, l = string.match(s, '^(%d+):(%d+):(%d+)$')
  return tonumber(m), tonumber(c), tonumber(l)
end

while true do
  local first = redis.call('LINDEX', KEYS[1], 0)
  if not first or tonumber(first) + MINUTE > now then break end
  redis.call('LPOP', KEYS[1])
end
local used = redis.call('LLEN', KEYS[1])
if used > perMinute then
  redis.call('LTRIM', KEYS[1], used - perMinute, -1)
  used = perMinute
end

local total = tonumber(redis.call('HGET', KEYS[3], 'total') or '0')
while true do
  local first = redis.call('LINDEX', KEYS[2], 0)
  if not first then break end
  local _, count, last = bucket(first)
  if last + DAY > now then break end
  redis.call('LPOP', KEYS[2])
  total = total - count
end

local admitted = used < perMinute and total < daily
if admitted and hit then
  redis.call('RPUSH', KEYS[1], int(now))
  used = used + 1
  local minute = math.floor(now / MINUTE)
  local tail = redis.call('LINDEX', KEYS[2], -1)
  local tm, tc = nil, nil
  if tail then tm, tc = bucket(tail) end
  if tm and tm >= minute then
    redis.call('LSET', KEYS[2], -1, int(tm) .. ':' .. int(tc + 1) .. ':' .. int(now))
  else
    redis.call('RPUSH', KEYS[2], int(minute) .. ':1:' .. int(now))
  end
  total = total + 1
  redis.call('HSET', KEYS[3], 'total', int(total), 'latest', int(now))
  for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], DAY + MINUTE) end
elseif redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('HSET', KEYS[3], 'total', int(total))
end

local minuteBack, dayBack, wait = 0, 0, 0
local oldest = redis.call('LINDEX', KEYS[1], 0)
if oldest then minuteBack = tonumber(oldest) + MINUTE - now end
local firstBucket = redis.call('LINDEX', KEYS[2], 0)
if firstBucket then
  local _, _, last = bucket(firstBucket)
  dayBack = last + DAY - now
end
if not admitted then
  if used >= perMinute then
    wait = tonumber(redis.call('LINDEX', KEYS[1], used - perMinute)) + MINUTE - now
  end
  if total >= daily then
    local left = total
    for _, b in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
      local _, count, last = bucket(b)
      left = left - count
      if left < daily then
        wait = math.max(wait, last + DAY - now)
        break
      end
    end
  end
end
return { admitted and 1 or 0, used, minuteBack, total, dayBack, wait }
