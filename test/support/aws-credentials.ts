/** Sets AWS credentials in the environment for the SDK's default chain; returns a restore function. */
export function useFakeAwsCredentials(): () => void {
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  process.env.AWS_ACCESS_KEY_ID = 'AKIDTEST';
  process.env.AWS_SECRET_ACCESS_KEY = 'test-secret';
  return () => {
    for (const [name, value] of [['AWS_ACCESS_KEY_ID', saved.id], ['AWS_SECRET_ACCESS_KEY', saved.secret]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

/** Takes the AWS credentials out of the environment (and the SDK's shared files with them); returns a restore function. */
export function withoutAwsCredentials(): () => void {
  const names = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_CONFIG_FILE', 'AWS_EC2_METADATA_DISABLED'];
  const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]));
  for (const n of names) delete process.env[n];
  // no shared files, no instance metadata: the chain ends at once wherever the test runs
  process.env.AWS_SHARED_CREDENTIALS_FILE = '/nonexistent/credentials';
  process.env.AWS_CONFIG_FILE = '/nonexistent/config';
  process.env.AWS_EC2_METADATA_DISABLED = 'true';
  return () => {
    for (const n of names) {
      if (saved[n] === undefined) delete process.env[n];
      else process.env[n] = saved[n];
    }
  };
}
