export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/**
 * What a user may ask of a campaign: the decider's commands behind POST /api/campaigns/:id/<action>,
 * and `edit` (PATCH) and `delete` (DELETE).
 */
export type CampaignAction = 'send' | 'pause' | 'resume' | 'cancel' | 'edit' | 'delete';

// A campaign is edited until it finishes (a paused one too: a deleted template is replaced, a typo in
// the sender mended); deleted while nothing of it has been sent, else cancelled.
const ACTIONS: Record<CampaignStatus, readonly CampaignAction[]> = {
  draft: ['send', 'edit', 'delete', 'cancel'],
  scheduled: ['pause', 'edit', 'cancel'],
  sending: ['pause', 'cancel'],
  paused: ['resume', 'edit', 'cancel'],
  sent: [],
  cancelled: [],
};

/**
 * The actions that change a campaign in `status`: the ones the dashboard offers, and the only ones the
 * decider takes. Any other is refused with a 409, except asking again for a pause or a cancellation
 * already in effect, which changes nothing and is no error (a pause over the daily cap's makes it the
 * admin's, which does not end by itself).
 */
export function campaignActions(status: CampaignStatus): readonly CampaignAction[] {
  return ACTIONS[status];
}
