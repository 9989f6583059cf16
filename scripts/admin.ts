/**
 * npm run admin -- reset-password <email>
 *   Gives a dashboard user a new generated password and prints it once (for an operator who lost the
 *   one printed at first boot; ADMIN_PASSWORD only applies at first boot). Recorded as an event by the
 *   actor `cli`.
 * npm run admin -- rotate-encryption-key [--batch N]
 *   Re-wraps every data key from ENCRYPTION_KEY_PREVIOUS (the key the data was written with) to
 *   ENCRYPTION_KEY (the new one), then switches the stored verifier, after which a start with the old
 *   key alone is refused. Resumable: run it again after a stop (docs/operations.md).
 */
import { parseMasterKey } from '../src/adapters/crypto/master-key.js';
import { rotateKeyEncryptionKey, RotationRefused } from '../src/adapters/crypto/key-rotation.js';
import { resetPassword } from '../src/commands/reset-password.js';
import { AppError } from '../src/domain/errors.js';
import { runTool } from './run-tool.js';

const USAGE = 'Usage: npm run admin -- reset-password <email> | rotate-encryption-key [--batch N]';
const [command, ...args] = process.argv.slice(2);
const batchArg = args[0] === '--batch' ? Number(args[1]) : undefined;
const usable =
  (command === 'reset-password' && args.length === 1) ||
  (command === 'rotate-encryption-key' && (args.length === 0 || (args.length === 2 && Number.isInteger(batchArg) && batchArg! > 0)));
if (!usable) {
  console.error(command && !['reset-password', 'rotate-encryption-key'].includes(command) ? `Unknown admin command "${command}". ${USAGE}` : USAGE);
  process.exit(1);
}
if (command === 'rotate-encryption-key' && (!process.env.ENCRYPTION_KEY || !process.env.ENCRYPTION_KEY_PREVIOUS)) {
  console.error('rotate-encryption-key needs ENCRYPTION_KEY (the new key) and ENCRYPTION_KEY_PREVIOUS (the key the data was written with).');
  process.exit(1);
}

await runTool(async ({ config, infra, store }) => {
  if (command === 'rotate-encryption-key') {
    if (config.ENCRYPTION_KEY === config.ENCRYPTION_KEY_PREVIOUS) {
      console.error('ENCRYPTION_KEY and ENCRYPTION_KEY_PREVIOUS are the same key: nothing to rotate.');
      return 1;
    }
    try {
      const report = await rotateKeyEncryptionKey(
        infra.db,
        { next: parseMasterKey(config.ENCRYPTION_KEY!)!, previous: parseMasterKey(config.ENCRYPTION_KEY_PREVIOUS!)! },
        { batch: batchArg },
      );
      console.log(`Data keys in ${store}: ${report.rewrapped} re-wrapped, ${report.already} already under the new key, ${report.unreadable} opened by neither key.`);
      if (!report.switched) {
        console.error('Not switched: some keys open with neither key (see docs/operations.md). The old key still opens the data.');
        return 1;
      }
      console.log(
        'Rotated: start every process with the new ENCRYPTION_KEY and without ENCRYPTION_KEY_PREVIOUS (a process that reads its key from $DATA_DIR/encryption.key: write the new key there); the old key is now refused.',
      );
      return 0;
    } catch (err) {
      if (err instanceof RotationRefused) {
        console.error(err.message);
        return 1;
      }
      throw err;
    }
  }
  const email = args[0];
  try {
    const { password } = await resetPassword({ eventStore: infra.eventStore }, email, 'cli');
    console.log(`New password for ${email.trim().toLowerCase()} (shown once): ${password}`);
    return 0;
  } catch (err) {
    if (err instanceof AppError && err.status === 404) {
      console.error(`Unknown user ${email}: no dashboard user has this email in ${store}.`);
      return 1;
    }
    throw err;
  }
});
