import { expect } from 'chai';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { freePort, spawnServer, type SpawnedServer } from '../support/spawn-server.js';
import { deliveryDiagnosis } from '../support/delivery-diagnosis.js';

// The README's "Five minutes with curl" is what a newcomer pastes first: every block of it runs here,
// as written, in one bash session against a fresh server started with the environment the README's
// first block exports. Only the two addresses the README's setup block defines (BASE, HOOK_PORT) are
// given free ports of this machine afterwards. Edit the walkthrough into something that does not
// work and this fails.

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const section = /^## Five minutes with curl$([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);

/**
 * What each block after the start and setup blocks must print. `settles`: the block only reads what
 * the workers write moments later (the timeline, the suppression list), so it is run again until
 * its output shows it; a person typing the next command never notices the wait.
 */
const expectations: { shows: RegExp[]; settles?: boolean }[] = [
  { shows: [/"domain":"example\.com"/, /"verified":true/] },
  { shows: [/^queued \w+$/m] },
  { shows: [/"items":\[\{"id":"\w+"/, /"to":"ada@example\.org"/, /"events":\[\{"type":"sent"/], settles: true },
  { shows: [/received \{[^\n]*"event":"webhook\.test"/, /"delivered":true,"responseStatus":200/] },
  { shows: [/"unsubscribed":true/] },
  {
    shows: [
      /"email":"ada@example\.org","reason":"unsubscribed","source":"one_click"/,
      /"message":"ada@example\.org is suppressed","error":"Bad Request","statusCode":400/,
    ],
  },
];

/** A bash process fed one block at a time, so variables and background jobs carry over as in a terminal. */
class Shell {
  private readonly bash: ChildProcessWithoutNullStreams;
  private output = '';
  private exited = false;

  constructor(env: NodeJS.ProcessEnv) {
    this.bash = spawn('bash', ['--noprofile', '--norc'], { env, detached: true });
    this.bash.stdout.on('data', (d) => (this.output += d));
    this.bash.stderr.on('data', (d) => (this.output += d));
    this.bash.on('exit', () => (this.exited = true));
    // Stricter than a terminal: any failing command, also inside a pipe, fails the block.
    this.bash.stdin.write('set -eo pipefail\n');
  }

  /** Runs a block; resolves with what it printed once it has finished, rejects if the shell died. */
  async run(block: string, timeoutMs = 60_000): Promise<string> {
    const start = this.output.length;
    const marker = `__block_done_${Math.random().toString(36).slice(2)}__`;
    this.bash.stdin.write(`${block}\necho ${marker}\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const printed = this.output.slice(start);
      const end = printed.indexOf(marker);
      if (end >= 0) return printed.slice(0, end);
      if (this.exited) throw new Error(`the block failed (bash exited):\n${block}\n--- output ---\n${printed}`);
      if (Date.now() > deadline) throw new Error(`the block did not finish:\n${block}\n--- output ---\n${printed}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Everything printed so far, the background receiver's lines included. */
  printed(): string {
    return this.output;
  }

  /** The shell and whatever it left running in the background (the walkthrough's receiver). */
  kill() {
    try {
      process.kill(-this.bash.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

describe('README walkthrough ("Five minutes with curl"), pasted as written', function () {
  this.timeout(180_000);
  let testDb: TestDatabase;
  let server: SpawnedServer | undefined;
  let shell: Shell | undefined;

  before(async () => {
    testDb = await createTestDatabase({ migrate: false });
  });
  after(async () => {
    shell?.kill();
    await server?.stop();
    await testDb.drop();
  });

  it('has a start block, a setup block and the steps, using only curl and node', () => {
    expect(blocks.length, 'sh blocks in the walkthrough').to.equal(2 + expectations.length);
    expect(blocks[0]).to.include('npm ci && npm start');
    for (const block of blocks) expect(block).not.to.match(/\bjq\b/);
  });

  it('every block exits 0 and shows what the README says it does', async () => {
    // The first block: `export NAME=value ...` then `npm ci && npm start`; the server gets exactly that.
    const exported = /^export (.+)$/m.exec(blocks[0])?.[1] ?? '';
    const env = Object.fromEntries(exported.split(/\s+/).map((pair) => pair.split('=') as [string, string]));
    expect(env).to.have.keys('ADMIN_PASSWORD', 'WEBHOOK_ALLOW_PRIVATE_TARGETS');
    const port = await freePort();
    // warnings kept (not the shell's): a failure below shows what the service said
    server = await spawnServer('all', { ...env, DATABASE_URL: testDb.url, PORT: String(port), LOG_LEVEL: 'warn' }, { startTimeoutMs: 60_000 });

    // A second terminal: the user's environment, without anything the server was given.
    const userEnv: NodeJS.ProcessEnv = { ...process.env };
    for (const name of [...Object.keys(env), 'DATABASE_URL', 'BASE', 'HOOK_PORT', 'TOKEN', 'KEY']) delete userEnv[name];
    shell = new Shell(userEnv);

    const setup = blocks[1];
    expect(setup).to.match(/^BASE=http:\/\/localhost:3000 HOOK_PORT=4000$/m);
    await shell.run(setup);
    await shell.run(`BASE=http://localhost:${port} HOOK_PORT=${await freePort()}`);

    for (const [i, expectation] of expectations.entries()) {
      const block = blocks[i + 2];
      const deadline = Date.now() + 20_000;
      let printed = await shell.run(block);
      while (expectation.settles && !expectation.shows.every((re) => re.test(printed)) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        printed = await shell.run(block);
      }
      for (const re of expectation.shows) expect(printed, `block ${i + 3}:\n${block}`).to.match(re);
      // Every variable a block sets holds a value (a failed lookup prints "undefined", and exits 0).
      for (const [, name] of block.matchAll(/^([A-Z_]+)=\$\(/gm)) {
        // the walkthrough's receiver runs in the background of the same shell and prints when a webhook arrives
        const out = await shell.run(`printf '%s\\n' "$${name}"`);
        const value = out.split('\n').filter((line) => !line.startsWith('received ')).join('\n').trim();
        expect(value, `${name} after block ${i + 3}`).to.match(/^(?!undefined$|null$)\S+$/);
      }
    }

    // The receiver started in the walkthrough got the unsubscribe, as the README says it prints.
    const unsubscribed = /received \{[^\n]*"event":"contact\.unsubscribed"[^\n]*"email":"ada@example\.org","source":"one_click"/;
    const deadline = Date.now() + 20_000;
    while (!unsubscribed.test(shell.printed()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (!unsubscribed.test(shell.printed())) {
      // where the delivery stands, for the one who reads the failure
      expect.fail(
        `no contact.unsubscribed at the receiver within 20 s of the last block\n${await deliveryDiagnosis(testDb.db)}\n` +
          `shell printed:\n${shell.printed().slice(-3000)}\nservice said:\n${server!.output().slice(-4000)}`,
      );
    }
  });
});
