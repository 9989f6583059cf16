/** What a test support module started for the whole mocha process and stops once every file has run (the root hook). */
export const atEnd: (() => Promise<void>)[] = [];
