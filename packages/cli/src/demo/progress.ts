/** Progress of the demo seed on stderr, so stdout stays the command's answer. */
export const demoProgress = (done: number, total: number) => {
  if (done === 0) process.stderr.write(`Creating the demo chamber: ${total} members`)
  else process.stderr.write(done === total ? ` ${done}. Done.\n` : ` ${done}…`)
}
