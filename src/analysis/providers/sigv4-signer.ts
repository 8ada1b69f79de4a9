// AWS Signature Version 4 (Amazon Managed Prometheus, CloudWatch): credentials from the standard environment variables, signing by aws4.
import aws4 from 'aws4';
import type { Sigv4Config } from '../../manifest/analysis.ts';
import { MetricProviderError } from './metric-provider-error.ts';

/** The AWS service name Amazon Managed Prometheus signs for. */
export const AMP_SERVICE = 'aps';

/** Static AWS credentials (an access key, and a session token for temporary ones). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** One request to sign: what will be sent, exactly. */
export interface SignableRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * The credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), as every AWS SDK
 * reads them first. The message never carries a value.
 */
export function awsCredentialsFromEnvironment(
  provider: string,
  env: Readonly<Record<string, string | undefined>>,
  /** What needs them, at the start of the message. */
  field = 'authentication.sigv4',
): AwsCredentials {
  const accessKeyId = env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
  if (!accessKeyId || !secretAccessKey)
    throw new MetricProviderError(
      provider,
      `${field}: no AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and AWS_SESSION_TOKEN for temporary credentials, in the reconciler’s environment)`,
    );
  const sessionToken = env['AWS_SESSION_TOKEN'];
  return { accessKeyId, secretAccessKey, ...(sessionToken && { sessionToken }) };
}

/** The region to sign for: the metric's, else AWS_REGION / AWS_DEFAULT_REGION. */
export function sigv4Region(
  provider: string,
  config: Sigv4Config,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const region = config.region || env['AWS_REGION'] || env['AWS_DEFAULT_REGION'];
  if (!region)
    throw new MetricProviderError(
      provider,
      'authentication.sigv4: region is required (or AWS_REGION in the environment)',
    );
  return region;
}

/** `20260101T000000Z`, the form X-Amz-Date takes. */
function amzDate(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** The AWS service name CloudWatch signs for (its model's `aws.auth#sigv4` name). */
export const CLOUDWATCH_SERVICE = 'monitoring';

/**
 * The request's headers with the SigV4 ones added (Host, X-Amz-Date, X-Amz-Security-Token,
 * Authorization), all names lowercased, signed at `now` for `region` and `service` (default `aps`).
 */
export function signSigv4(
  request: SignableRequest,
  region: string,
  credentials: AwsCredentials,
  now: Date,
  service: string = AMP_SERVICE,
): Record<string, string> {
  const options: aws4.Request & { headers: Record<string, string | number> } = {
    host: request.url.host,
    path: `${request.url.pathname}${request.url.search}`,
    method: request.method,
    service,
    region,
    headers: { ...request.headers, 'X-Amz-Date': amzDate(now) },
    ...(request.body !== undefined && { body: request.body }),
  };
  aws4.sign(options, credentials);
  const signed: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers)) signed[name.toLowerCase()] = String(value);
  return signed;
}
