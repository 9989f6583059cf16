import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../src/config/env.js';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return err as ConfigError;
  }
  expect.fail(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig (docs/configuration.md)', () => {
  describe('defaults', () => {
    // An explicit empty env, so nothing from the developer's shell leaks into the defaults.
    const config = () => loadConfig({});

    it('PORT 3000 and BASE_URL http://localhost:3000', () => {
      expect(config().PORT).to.equal(3000);
      expect(config().BASE_URL).to.equal('http://localhost:3000');
    });

    it('BASE_URL follows PORT when unset', () => {
      expect(loadConfig({ PORT: '8080' }).BASE_URL).to.equal('http://localhost:8080');
    });

    it('BASE_URL loses its trailing slashes', () => {
      expect(loadConfig({ BASE_URL: 'https://mail.example.com/' }).BASE_URL).to.equal('https://mail.example.com');
      expect(loadConfig({ BASE_URL: 'https://example.com/courier//' }).BASE_URL).to.equal('https://example.com/courier');
    });

    it('webhook retries, timeout and private-target guard', () => {
      expect(config().WEBHOOK_RETRY_DELAYS_MS).to.deep.equal([60000, 120000, 240000, 480000, 960000]);
      expect(config().WEBHOOK_TIMEOUT_MS).to.equal(15000);
      expect(config().WEBHOOK_ALLOW_PRIVATE_TARGETS).to.equal(false);
    });

    it('side-effect lease 15 s', () => {
      expect(config().SIDE_EFFECT_LEASE_MS).to.equal(15000);
    });

    it('SMS opt-out sync every 15 minutes, signup closed, SMS through SNS', () => {
      expect(config().SMS_OPTOUT_SYNC_INTERVAL_MS).to.equal(900000);
      expect(config().ALLOW_SIGNUP).to.equal(false);
      expect(config().SMS_PROVIDER).to.equal('sns');
    });

    it('SNS_CERT_URL_PATTERN admits AWS SNS certificate URLs only', () => {
      const pattern = config().SNS_CERT_URL_PATTERN;
      expect(pattern).to.be.instanceOf(RegExp);
      expect(pattern.test('https://sns.us-east-1.amazonaws.com/x.pem')).to.equal(true);
      expect(pattern.test('https://sns.cn-north-1.amazonaws.com.cn/x.pem')).to.equal(true);
      expect(pattern.test('http://127.0.0.1/x.pem')).to.equal(false);
      expect(pattern.test('http://sns.us-east-1.amazonaws.com/x.pem')).to.equal(false);
      expect(pattern.test('https://sns.us-east-1.amazonaws.com.evil.example/x.pem')).to.equal(false);
    });

    it('HTTP timeouts: headers 20 s, whole request 120 s, idle keep-alive 5 s', () => {
      expect(config()).to.include({ HTTP_HEADERS_TIMEOUT_MS: 20000, HTTP_REQUEST_TIMEOUT_MS: 120000, HTTP_KEEP_ALIVE_TIMEOUT_MS: 5000 });
    });

    it('an empty variable counts as unset', () => {
      expect(loadConfig({ PORT: '', ALLOW_SIGNUP: '' })).to.include({ PORT: 3000, ALLOW_SIGNUP: false });
    });
  });

  describe('values that are set', () => {
    it('are parsed into their types', () => {
      const config = loadConfig({
        PORT: '4000',
        WEBHOOK_RETRY_DELAYS_MS: '10,20',
        WEBHOOK_TIMEOUT_MS: '500',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        ALLOW_SIGNUP: 'yes',
        SMS_PROVIDER: 'sandbox',
        SMS_OPTOUT_SYNC_INTERVAL_MS: '1000',
        SNS_CERT_URL_PATTERN: '^http://127\\.0\\.0\\.1:\\d+/',
      });
      expect(config).to.include({
        PORT: 4000,
        BASE_URL: 'http://localhost:4000',
        WEBHOOK_TIMEOUT_MS: 500,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
        ALLOW_SIGNUP: true,
        SMS_PROVIDER: 'sandbox',
        SMS_OPTOUT_SYNC_INTERVAL_MS: 1000,
      });
      expect(config.WEBHOOK_RETRY_DELAYS_MS).to.deep.equal([10, 20]);
      expect(config.SNS_CERT_URL_PATTERN.test('http://127.0.0.1:9999/cert.pem')).to.equal(true);
    });
  });

  describe('a bad value throws a ConfigError whose message is one line naming the variable', () => {
    const cases: [string, string][] = [
      ['PORT', 'abc'],
      ['PORT', ' '],
      ['PORT', '0x50'],
      ['PORT', '1e3'],
      ['PORT', '70000'],
      ['WEBHOOK_TIMEOUT_MS', '0'],
      ['DATABASE_URL', 'mysql://x'],
      ['WEBHOOK_RETRY_DELAYS_MS', '1,x'],
      ['ALLOW_SIGNUP', 'maybe'],
      ['JWT_SECRET', 'too-short-to-sign-with'],
      ['SNS_CERT_URL_PATTERN', '('],
      ['HTTP_HEADERS_TIMEOUT_MS', '0'],
      ['HTTP_REQUEST_TIMEOUT_MS', '10s'],
      ['HTTP_KEEP_ALIVE_TIMEOUT_MS', '-1'],
      // a lease that could end between two heartbeats of a live worker
      ['SIDE_EFFECT_LEASE_MS', '999'],
      // past Node's longest timer: it would fire every millisecond
      ['CAMPAIGN_TIMER_INTERVAL_MS', '2592000000'],
      ['SMS_OPTOUT_SYNC_INTERVAL_MS', '2147483648'],
      ['PROVIDER_RETRY_DELAYS_MS', '5000,2592000000'],
    ];
    for (const [name, value] of cases) {
      it(`${name}=${value}`, () => {
        const err = configError({ [name]: value });
        expect(err.message).not.to.match(/[\r\n]/);
        expect(err.message).to.match(new RegExp(`\\b${name}\\b`));
      });
    }

    it('a negative number is refused for its sign, not as something that is no number', () => {
      expect(configError({ PORT: '-1' }).message).to.include('no sign');
      expect(configError({ WEBHOOK_TIMEOUT_MS: '-5' }).message).to.include('no sign');
    });

    it('HTTP_HEADERS_TIMEOUT_MS above HTTP_REQUEST_TIMEOUT_MS (Node refuses to start such a server)', () => {
      const err = configError({ HTTP_HEADERS_TIMEOUT_MS: '30000', HTTP_REQUEST_TIMEOUT_MS: '20000' });
      expect(err.message).to.equal('Invalid configuration: HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
    });
  });

  describe('SNS_TOPIC_ARNS', () => {
    it('is unset by default (any topic), and a comma-separated list of ARNs when set', () => {
      expect(loadConfig({}).SNS_TOPIC_ARNS).to.equal(undefined);
      const arns = loadConfig({ SNS_TOPIC_ARNS: 'arn:aws:sns:us-east-1:123456789012:ses-events, arn:aws-cn:sns:cn-north-1:123456789012:ses_2' }).SNS_TOPIC_ARNS;
      expect(arns).to.deep.equal(['arn:aws:sns:us-east-1:123456789012:ses-events', 'arn:aws-cn:sns:cn-north-1:123456789012:ses_2']);
    });
    for (const value of ['ses-events', 'arn:aws:sqs:us-east-1:123456789012:q', 'arn:aws:sns:us-east-1:123456789012:ses-events,', 'arn:aws:sns:us-east-1:123:x']) {
      it(`refuses ${value} with one line naming the variable`, () => {
        expect(configError({ SNS_TOPIC_ARNS: value }).message).to.equal('Invalid configuration: SNS_TOPIC_ARNS must be a comma-separated list of SNS topic ARNs');
      });
    }
  });
});

describe('node src/main.ts with a bad setting', function () {
  this.timeout(30_000);

  it('PORT=abc: exits non-zero after one stderr line naming PORT, no stack trace', async () => {
    const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', main, 'all'], {
      env: { ...process.env, LOG_LEVEL: 'silent', PORT: 'abc' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
    clearTimeout(timer);

    expect(code, `signal ${signal}: ${stderr}`).to.be.a('number').and.not.equal(0);
    const lines = stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines, stderr).to.have.lengthOf(1);
    expect(lines[0]).to.match(/\bPORT\b/);
    expect(stderr).not.to.match(/^\s*at /m);
    expect(stdout).to.equal('');
  });
});

describe('TRUST_PROXY: express\'s `trust proxy` syntax', () => {
  it('defaults to loopback', () => {
    expect(loadConfig({}).TRUST_PROXY).to.equal('loopback');
  });

  it('takes booleans, a hop count, and comma-separated names, addresses and CIDR ranges', () => {
    expect(loadConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY).to.equal(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).to.equal(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).TRUST_PROXY).to.equal(2);
    const list = 'loopback, uniquelocal, 203.0.113.0/24, 2001:db8::1';
    expect(loadConfig({ TRUST_PROXY: list }).TRUST_PROXY).to.equal(list);
  });

  for (const value of ['loopbak', '10.0.0.0/33', 'loopback,,x', 'yes']) {
    it(`refuses ${value} with one line naming TRUST_PROXY`, () => {
      const err = configError({ TRUST_PROXY: value });
      expect(err.message).not.to.match(/[\r\n]/);
      expect(err.message).to.match(/^Invalid configuration: TRUST_PROXY /);
    });
  }
});

describe('throttling settings', () => {
  it('default to 5 failures per account and address, 20 per account, 100 per address, 1,000 refused keys per address, in 15 minutes', () => {
    expect(loadConfig({})).to.include({
      LOGIN_FAILURES_PER_ACCOUNT_AND_IP: 5,
      LOGIN_FAILURES_PER_ACCOUNT: 20,
      LOGIN_FAILURES_PER_IP: 100,
      API_KEY_FAILURES_PER_IP: 1000,
      THROTTLE_WINDOW_SECONDS: 900,
    });
  });

  for (const name of ['LOGIN_FAILURES_PER_ACCOUNT_AND_IP', 'LOGIN_FAILURES_PER_ACCOUNT', 'LOGIN_FAILURES_PER_IP', 'API_KEY_FAILURES_PER_IP', 'THROTTLE_WINDOW_SECONDS']) {
    it(`refuses ${name}=0 with one line naming it`, () => {
      expect(configError({ [name]: '0' }).message).to.match(new RegExp(`^Invalid configuration: ${name} `));
    });
  }
});
