/**
 * npm run admin -- reset-password <email>
 * Gives a dashboard user a new generated password and prints it once (for an operator who lost the
 * one printed at first boot; ADMIN_PASSWORD only applies at first boot). Recorded as an event by the
 * actor `cli`.
 */
import { resetPassword } from '../src/commands/reset-password.js';
import { AppError } from '../src/domain/errors.js';
import { runTool } from './run-tool.js';

const USAGE = 'Usage: npm run admin -- reset-password <email>';
const [command, email] = process.argv.slice(2);
if (command !== 'reset-password' || !email) {
  console.error(command && command !== 'reset-password' ? `Unknown admin command "${command}". ${USAGE}` : USAGE);
  process.exit(1);
}

await runTool(async ({ infra, store }) => {
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
