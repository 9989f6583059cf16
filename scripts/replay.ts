/**
 * npm run replay -- <messageId>
 * Prints every event of a message's stream: time, type, actor and metadata, and the state it led to.
 */
import { formatReplay, replayMessage } from '../src/commands/replay.js';
import { runTool } from './run-tool.js';

const messageId = process.argv[2];
if (!messageId) {
  console.error('Usage: npm run replay -- <messageId>');
  process.exit(1);
}
await runTool(
  async ({ infra, store }) => {
    if ((await replayMessage(infra.eventStore, messageId)).events.length === 0) {
      console.error(`Unknown message ${messageId}: no events for it in ${store}. Check the id (the API's /api/messages lists them) and DATA_DIR or DATABASE_URL.`);
      return 1;
    }
    console.log((await formatReplay(infra.eventStore, messageId)).join('\n'));
    return 0;
  },
  { migrate: false },
);
