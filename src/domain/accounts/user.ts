import { conflict } from '../errors.js';
import type { Decider } from '../decider.js';

export interface UserRegistered {
  type: 'UserRegistered';
  data: { userId: string; accountId: string; email: string; passwordHash: string; role: 'owner' | 'admin'; createdAt: string };
}

/**
 * A dashboard user. Streams are keyed by the normalised login email, so the event store's
 * `no_stream` check is what makes an email unique: no read-then-write race.
 */
export const userStream = (email: string) => `user-${email.trim().toLowerCase()}`;

export interface UserState {
  user: UserRegistered['data'] | null;
}

export const userDecider: Decider<UserState, UserRegistered['data'], UserRegistered> = {
  initialState: { user: null },
  evolve: (state, event) => (event.type === 'UserRegistered' ? { user: event.data as UserRegistered['data'] } : state),
  decide(command, state) {
    if (state.user) {
      if (state.user.userId === command.userId) return [];
      throw conflict(`a user with email ${command.email} already exists`);
    }
    return [{ type: 'UserRegistered', data: command }];
  },
};
