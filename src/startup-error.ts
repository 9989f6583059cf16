/**
 * A start-up failure the operator can act on. Its message is the one line the process prints before
 * it exits: what happened and what to do about it (no stack trace).
 */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}
