import { conflict, notFound } from '../errors.js';
import type { Decider } from '../decider.js';

export interface UserRegistered {
  type: 'UserRegistered';
  data: { userId: string; accountId: string; email: string; passwordHash: string; role: 'owner' | 'admin'; createdAt: string };
}

/** A new password hash for an existing user: their own change, or an operator's reset from the command line. */
export interface UserPasswordChanged {
  type: 'UserPasswordChanged';
  data: { userId: string; accountId: string; passwordHash: string; changedAt: string };
}

/** A successful dashboard sign-in: the audit trail lists it (who, when, from which address). */
export interface UserSignedIn {
  type: 'UserSignedIn';
  data: { userId: string; accountId: string; signedInAt: string };
}

/** A sign-out: the session's token is refused from now on, in every process, though it has not expired. */
export interface UserSignedOut {
  type: 'UserSignedOut';
  data: { userId: string; accountId: string; sessionId: string; sessionExpiresAt: string; signedOutAt: string };
}

export type UserEvent = UserRegistered | UserPasswordChanged | UserSignedIn | UserSignedOut;

export type UserCommand =
  | UserRegistered['data']
  | {
      kind: 'changePassword';
      email: string;
      passwordHash: string;
      now: string;
      /** the hash the user's current password was checked against (their own change; an operator's reset has none) */
      provenHash?: string;
    }
  | { kind: 'signIn'; now: string }
  | { kind: 'signOut'; sessionId: string; sessionExpiresAt: string; now: string };

/**
 * A dashboard user. Streams are keyed by the normalised login email, so the event store's
 * `no_stream` check is what makes an email unique: no read-then-write race.
 */
export const userStream = (email: string) => `user-${email.trim().toLowerCase()}`;

export interface UserState {
  user: UserRegistered['data'] | null;
  /** the sessions signed out */
  ended?: string[];
}

export const userDecider: Decider<UserState, UserCommand, UserEvent> = {
  initialState: { user: null },
  evolve(state, event) {
    if (event.type === 'UserRegistered') return { user: event.data as UserRegistered['data'] };
    if (event.type === 'UserPasswordChanged' && state.user) {
      return { ...state, user: { ...state.user, passwordHash: (event.data as UserPasswordChanged['data']).passwordHash } };
    }
    if (event.type === 'UserSignedOut') return { ...state, ended: [...(state.ended ?? []), (event.data as UserSignedOut['data']).sessionId] };
    return state;
  },
  decide(command, state) {
    if ('kind' in command && command.kind === 'signIn') {
      if (!state.user) throw notFound('user not found');
      const { userId, accountId } = state.user;
      return [{ type: 'UserSignedIn', data: { userId, accountId, signedInAt: command.now } }];
    }
    if ('kind' in command && command.kind === 'signOut') {
      if (!state.user) throw notFound('user not found');
      if (state.ended?.includes(command.sessionId)) return [];
      const { userId, accountId } = state.user;
      const { sessionId, sessionExpiresAt, now } = command;
      return [{ type: 'UserSignedOut', data: { userId, accountId, sessionId, sessionExpiresAt, signedOutAt: now } }];
    }
    if ('kind' in command) {
      if (!state.user) throw notFound(`no user with email ${command.email}`);
      // Checked against a password another change has since replaced: the proof no longer holds.
      if (command.provenHash !== undefined && command.provenHash !== state.user.passwordHash) {
        throw conflict('the password was changed meanwhile: sign in with the new one');
      }
      const { userId, accountId } = state.user;
      return [{ type: 'UserPasswordChanged', data: { userId, accountId, passwordHash: command.passwordHash, changedAt: command.now } }];
    }
    if (state.user) {
      if (state.user.userId === command.userId) return [];
      throw conflict(`a user with email ${command.email} already exists`);
    }
    return [{ type: 'UserRegistered', data: command }];
  },
};
