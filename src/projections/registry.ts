import type { Projection } from './projection.js';
import { accountsProjection } from './accounts.js';
import { auditProjection } from './audit.js';
import { contactsProjection } from './contacts.js';
import { messagesProjection } from './messages.js';
import { messageChangesProjection } from './message-changes.js';
import { providerMessageIdsProjection } from './provider-message-ids.js';
import { suppressionsProjection } from './suppressions.js';
import { templatesProjection } from './templates.js';
import { webhookDeliveriesProjection } from './webhook-deliveries.js';
import { webhooksProjection } from './webhooks.js';

/** Every read model of the service; the runner keeps them all up to date. */
export const projections: Projection[] = [
  accountsProjection,
  contactsProjection,
  messagesProjection,
  suppressionsProjection,
  templatesProjection,
  webhooksProjection,
  webhookDeliveriesProjection,
  providerMessageIdsProjection,
  messageChangesProjection,
  auditProjection,
];
