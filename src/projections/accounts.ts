import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { isVerified, type IdentityKind } from '../domain/accounts/identity.js';
import type { Projection } from './projection.js';

/**
 * Read models of the security model: accounts (with settings), dashboard users, API keys (looked up
 * by hash on every request) and sending identities.
 */
export const accountsProjection: Projection = {
  name: 'accounts',
  // 2: provider_rate_per_second; 3: retention_days
  version: 5,
  tables: ['accounts', 'users', 'ended_sessions', 'api_keys', 'identities'],
  streamPrefixes: ['account-', 'user-', 'apikey-', 'identity-'],

  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.schema.createTable(t('accounts'), (tb) => {
      tb.text('id').primary();
      tb.text('name').notNullable();
      tb.integer('daily_send_cap').notNullable();
      tb.text('email_provider').notNullable();
      tb.text('tracking').notNullable();
      tb.double('provider_rate_per_second');
      tb.integer('retention_days');
      tb.jsonb('sms').notNullable();
      tb.timestamp('created_at', { useTz: true }).notNullable();
    });
    await trx.schema.createTable(t('users'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable().index();
      tb.text('email').notNullable().unique();
      tb.text('password_hash').notNullable();
      tb.text('role').notNullable();
      tb.timestamp('created_at', { useTz: true }).notNullable();
    });
    // sessions signed out before they expired: their tokens are refused
    await trx.schema.createTable(t('ended_sessions'), (tb) => {
      tb.text('session_id').primary();
      tb.text('user_id').notNullable();
      tb.timestamp('expires_at', { useTz: true }).notNullable();
    });
    await trx.schema.createTable(t('api_keys'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable().index();
      tb.text('name').notNullable();
      tb.text('key_hash').notNullable().unique();
      tb.text('prefix').notNullable();
      tb.jsonb('scopes').notNullable();
      tb.timestamp('expires_at', { useTz: true });
      tb.jsonb('ip_allowlist').notNullable();
      tb.integer('daily_limit');
      tb.timestamp('created_at', { useTz: true }).notNullable();
      tb.timestamp('revoked_at', { useTz: true });
    });
    await trx.schema.createTable(t('identities'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable();
      tb.text('kind').notNullable();
      tb.text('value').notNullable();
      tb.text('dkim').notNullable();
      tb.text('spf').notNullable();
      tb.text('mail_from').notNullable();
      tb.boolean('verified').notNullable();
      tb.jsonb('dns_records').notNullable();
      tb.timestamp('created_at', { useTz: true }).notNullable();
      tb.timestamp('updated_at', { useTz: true }).notNullable();
      tb.index(['account_id', 'kind', 'value']);
    });
  },

  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    for (const e of events) {
      const d = e.data;
      switch (e.type) {
        case 'AccountCreated':
          await trx(t('accounts'))
            .insert({
              id: d.accountId,
              name: d.name,
              daily_send_cap: d.settings.dailySendCap,
              email_provider: d.settings.emailProvider,
              tracking: d.settings.tracking,
              provider_rate_per_second: d.settings.providerRatePerSecond ?? null,
              sms: JSON.stringify(d.sms),
              created_at: d.createdAt,
            })
            .onConflict('id')
            .ignore();
          break;
        case 'SettingsChanged': {
          const before = await trx(t('accounts')).where({ id: d.accountId }).first('email_provider');
          // What one provider verified says nothing of another (the sandbox verifies anything): the
          // account's domains and senders send again once the new provider has checked them (Verify).
          if (before && before.email_provider !== d.settings.emailProvider) {
            await trx(t('identities')).where({ account_id: d.accountId }).update({ verified: false, dkim: 'pending', spf: 'pending', mail_from: 'pending' });
          }
          await trx(t('accounts')).where({ id: d.accountId }).update({
            daily_send_cap: d.settings.dailySendCap,
            email_provider: d.settings.emailProvider,
            tracking: d.settings.tracking,
            provider_rate_per_second: d.settings.providerRatePerSecond ?? null,
            retention_days: d.settings.retentionDays ?? null,
          });
          break;
        }
        case 'SmsSettingsChanged':
          await trx(t('accounts')).where({ id: d.accountId }).update({ sms: JSON.stringify(d.sms) });
          break;
        case 'UserRegistered':
          await trx(t('users'))
            .insert({
              id: d.userId,
              account_id: d.accountId,
              email: d.email,
              password_hash: d.passwordHash,
              role: d.role,
              created_at: d.createdAt,
            })
            .onConflict('id')
            .ignore();
          break;
        case 'UserPasswordChanged':
          await trx(t('users')).where({ id: d.userId }).update({ password_hash: d.passwordHash });
          break;
        case 'UserSignedOut':
          // a session past its expiry is refused by its token's own time: nothing to keep (a rebuild skips them)
          if (new Date(d.sessionExpiresAt) > new Date()) {
            await trx(t('ended_sessions')).insert({ session_id: d.sessionId, user_id: d.userId, expires_at: d.sessionExpiresAt }).onConflict('session_id').ignore();
          }
          break;
        case 'ApiKeyCreated':
          await trx(t('api_keys'))
            .insert({
              id: d.id,
              account_id: d.accountId,
              name: d.name,
              key_hash: d.keyHash,
              prefix: d.prefix,
              scopes: JSON.stringify(d.scopes),
              expires_at: d.expiresAt,
              ip_allowlist: JSON.stringify(d.ipAllowlist),
              daily_limit: d.dailyLimit,
              created_at: d.createdAt,
            })
            .onConflict('id')
            .ignore();
          break;
        case 'ApiKeyRevoked':
          await trx(t('api_keys')).where({ id: d.id }).update({ revoked_at: d.revokedAt });
          break;
        case 'IdentityAdded':
          await trx(t('identities'))
            .insert({
              id: d.id,
              account_id: d.accountId,
              kind: d.kind,
              value: d.value,
              dkim: d.dkim,
              spf: d.spf,
              mail_from: d.mailFrom,
              verified: isVerified(d.kind as IdentityKind, d),
              dns_records: JSON.stringify(d.dnsRecords),
              created_at: d.createdAt,
              updated_at: d.createdAt,
            })
            .onConflict('id')
            .ignore();
          break;
        case 'IdentityChecked': {
          const row = await trx(t('identities')).where({ id: d.id }).first('kind');
          if (!row) break;
          await trx(t('identities'))
            .where({ id: d.id })
            .update({
              dkim: d.dkim,
              spf: d.spf,
              mail_from: d.mailFrom,
              verified: isVerified(row.kind, d),
              dns_records: JSON.stringify(d.dnsRecords),
              updated_at: d.checkedAt,
            });
          break;
        }
        case 'IdentityRemoved':
          await trx(t('identities')).where({ id: d.id }).delete();
          break;
      }
    }
  },
};
