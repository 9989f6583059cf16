/**
 * npm run replay -- <messageId>
 * Prints every event of a message's stream: time, type, actor and metadata, and the state it led to.
 */
import { loadConfig } from '../src/config/env.js';
import { openInfrastructure } from '../src/infrastructure.js';
import { formatReplay } from '../src/commands/replay.js';

const messageId = process.argv[2];
if (!messageId) {
  console.error('Usage: npm run replay -- <messageId>');
  process.exit(1);
}
const infra = await openInfrastructure(loadConfig(), { migrate: false });
try {
  const lines = await formatReplay(infra.eventStore, messageId);
  console.log(lines.join('\n'));
  if (lines.length === 1) process.exitCode = 1;
} finally {
  await infra.close();
  process.exit(process.exitCode ?? 0);
}
