/** Provider event ids as earlier versions and this one record them (provider-event-ids.ts), for its tests in JavaScript and in SQL. */

export const MID = '883953f4-6105-42a2-a16a-77a8eac79483';

/** ids as earlier versions recorded them, and what every reader gets of them now */
export const FORMER_IDS: [recorded: string, read: string][] = [
  [`pm:delivery:${MID}:Ada@Example.org`, `pm:delivery:${MID}`],
  [`pm:delivery:${MID}:ada@example.org\nx`, `pm:delivery:${MID}`],
  [`pm:click:${MID}:2017-10-25T15:21:11Z:https://example.com/a?u=ada@example.org`, `pm:click:${MID}:2017-10-25T15:21:11Z`],
  [`pm:click:${MID}:2019-11-05T16:33:54.9070259Z:https://example.com/b`, `pm:click:${MID}:2019-11-05T16:33:54.9070259Z`],
  [`pm:click:${MID}:2014-08-01T13:28:10.2735393-04:00:https://example.com:8080/p`, `pm:click:${MID}:2014-08-01T13:28:10.2735393-04:00`],
  [`pm:click:${MID}:2017-10-25T15:21:11:http://example.com/no-zone`, `pm:click:${MID}:2017-10-25T15:21:11`],
  // a link that was no string was recorded as ''
  [`pm:click:${MID}:2017-10-25T15:21:11Z:`, `pm:click:${MID}:2017-10-25T15:21:11Z`],
  // no time, or none as Postmark writes it: the message's id alone
  [`pm:click:${MID}:undefined:https://example.com/a`, `pm:click:${MID}`],
  [`pm:click:p:t:https://x`, 'pm:click:p'],
  // a link that starts with a digit: not told apart from the time's own colons, so the time goes too
  [`pm:click:${MID}:2017-10-25T15:21:11Z:123.example/x`, `pm:click:${MID}`],
  ['ses:feedback:0100018f-3026eb77-283e-425d-ba61-c55a6c80a8f5-000000:ada@example.org', 'ses:feedback:0100018f-3026eb77-283e-425d-ba61-c55a6c80a8f5-000000'],
  ['ses:915f76db-fdae-4ce9-90d7-907e9de5de0d:ada@example.org', 'ses:915f76db-fdae-4ce9-90d7-907e9de5de0d'],
];

/** ids of this version (and those that never named anyone): read as they are */
export const CURRENT_IDS = [
  `pm:delivery:${MID}`,
  `pm:click:${MID}:0123456789abcdef0123456789abcdef`,
  `pm:click:${MID}:abcdef0123456789abcdef0123456789`,
  'pm:bounce:4323372036854775807',
  'pm:complaint:42',
  `pm:open:${MID}:2017-10-25T15:21:11Z`,
  `pm:subscription:${MID}:2017-10-25T15:21:11Z`,
  'ses:feedback:0100018f-3026eb77-283e-425d-ba61-c55a6c80a8f5-000000',
  'ses:915f76db-fdae-4ce9-90d7-907e9de5de0d',
  'ses:915f76db-fdae-4ce9-90d7-907e9de5de0d:send',
  'sandbox:bounce:m1',
  'service:clxyz',
  'provider-attempt-1',
  'f3a1c2d4-0b5e-4c6d-8e7f-9a0b1c2d3e4f',
];
