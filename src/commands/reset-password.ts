import { randomBytes } from 'node:crypto';
import { hashPassword } from '../domain/accounts/password.js';
import { userDecider, userStream } from '../domain/accounts/user.js';
import type { EventStore } from '../ports/event-store.js';
import { execute } from './execute.js';

/**
 * Gives a dashboard user a new generated password (an operator who lost the one printed at first
 * boot). Returns it: the caller shows it once; only its hash is stored. Unknown email: AppError 404.
 */
export async function resetPassword(deps: { eventStore: EventStore }, email: string, actor: string): Promise<{ password: string; userId: string }> {
  const password = randomBytes(12).toString('base64url');
  const normalised = email.trim().toLowerCase();
  const result = await execute(
    userDecider,
    { kind: 'changePassword', email: normalised, passwordHash: await hashPassword(password), now: new Date().toISOString() },
    { eventStore: deps.eventStore, streamId: userStream(normalised), metadata: { actor } },
  );
  return { password, userId: result.state.user!.userId };
}
