import { expect } from 'chai';
import { userDecider, type UserRegistered } from '../../../src/domain/accounts/user.js';
import { AppError } from '../../../src/domain/errors.js';
import { given } from '../../support/given.js';

const registered: UserRegistered['data'] = {
  userId: 'u1',
  accountId: 'a1',
  email: 'owner@example.com',
  passwordHash: 'scrypt$old',
  role: 'owner',
  createdAt: '2026-01-01T00:00:00.000Z',
};
const reset = { kind: 'changePassword' as const, email: 'owner@example.com', passwordHash: 'scrypt$new', now: '2026-02-01T00:00:00.000Z' };

describe('user decisions', () => {
  const signOut = { kind: 'signOut' as const, sessionId: 's1', sessionExpiresAt: '2026-02-01T12:00:00.000Z', now: '2026-02-01T01:00:00.000Z' };

  it('a sign-out ends the session once; another session is signed out on its own', () => {
    const history = [{ type: 'UserRegistered', data: registered }];
    const out = given(userDecider, history).when(signOut);
    expect(out).to.deep.equal([
      { type: 'UserSignedOut', data: { userId: 'u1', accountId: 'a1', sessionId: 's1', sessionExpiresAt: '2026-02-01T12:00:00.000Z', signedOutAt: '2026-02-01T01:00:00.000Z' } },
    ]);
    expect(given(userDecider, [...history, ...out]).when(signOut)).to.deep.equal([]);
    expect(given(userDecider, [...history, ...out]).when({ ...signOut, sessionId: 's2' }).map((e) => e.type)).to.deep.equal(['UserSignedOut']);
  });

  it('a sign-out of nobody registered is a 404', () => {
    expect(() => given(userDecider).when(signOut)).to.throw(AppError, 'user not found').with.property('status', 404);
  });

  it('changes the password of a registered user', () => {
    const events = given(userDecider, [{ type: 'UserRegistered', data: registered }]).when(reset);
    expect(events).to.deep.equal([
      { type: 'UserPasswordChanged', data: { userId: 'u1', accountId: 'a1', passwordHash: 'scrypt$new', changedAt: '2026-02-01T00:00:00.000Z' } },
    ]);
  });

  it("changes the password on the user's own proof of the current one", () => {
    const events = given(userDecider, [{ type: 'UserRegistered', data: registered }]).when({ ...reset, provenHash: 'scrypt$old' });
    expect(events.map((e) => e.type)).to.deep.equal(['UserPasswordChanged']);
  });

  it('refuses a change proven against a password another change has replaced (409)', () => {
    const history = [
      { type: 'UserRegistered', data: registered },
      { type: 'UserPasswordChanged', data: { userId: 'u1', accountId: 'a1', passwordHash: 'scrypt$other', changedAt: reset.now } },
    ];
    expect(() => given(userDecider, history).when({ ...reset, provenHash: 'scrypt$old' }))
      .to.throw(AppError, 'the password was changed meanwhile: sign in with the new one')
      .with.property('status', 409);
  });

  it('refuses to change the password of an email nobody registered', () => {
    expect(() => given(userDecider).when(reset))
      .to.throw(AppError, 'no user with email owner@example.com')
      .with.property('status', 404);
  });

  it('folds the latest password over the registration, keeping the rest', () => {
    const { state } = given(userDecider, [
      { type: 'UserRegistered', data: registered },
      { type: 'UserPasswordChanged', data: { userId: 'u1', accountId: 'a1', passwordHash: 'scrypt$new', changedAt: reset.now } },
    ]);
    expect(state.user).to.deep.equal({ ...registered, passwordHash: 'scrypt$new' });
  });

  it('a changed password does not free the email for a new registration', () => {
    const history = [
      { type: 'UserRegistered', data: registered },
      { type: 'UserPasswordChanged', data: { userId: 'u1', accountId: 'a1', passwordHash: 'scrypt$new', changedAt: reset.now } },
    ];
    expect(() => given(userDecider, history).when({ ...registered, userId: 'u2' })).to.throw(AppError, /already exists/);
  });

  it('given a registered user, when they sign in, then UserSignedIn naming them and their account', () => {
    const events = given(userDecider, [{ type: 'UserRegistered', data: registered }]).when({ kind: 'signIn', now: '2026-03-01T00:00:00.000Z' });
    expect(events).to.deep.equal([{ type: 'UserSignedIn', data: { userId: 'u1', accountId: 'a1', signedInAt: '2026-03-01T00:00:00.000Z' } }]);
  });

  it('a sign-in to an email nobody registered is refused', () => {
    expect(() => given(userDecider).when({ kind: 'signIn', now: '2026-03-01T00:00:00.000Z' })).to.throw(AppError);
  });
});
