/**
 * Whether an AWS SDK client can find credentials, asked without calling AWS: the SDK's own chain
 * (environment, shared files and profiles, web identity, container or instance role). Off AWS the
 * instance-metadata step fails fast or within its one-second timeout. A sentence naming the fix, or
 * null when there are credentials.
 */
export async function missingAwsCredentials(client: { config: { credentials: () => Promise<unknown> } }): Promise<string | null> {
  try {
    await client.config.credentials();
    return null;
  } catch (err) {
    return `no AWS credentials were found on this server (${(err as Error).message}): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or give it an IAM role`;
  }
}
