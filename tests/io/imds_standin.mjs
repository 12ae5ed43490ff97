// A stand-in for the EC2 instance metadata service (IMDSv2) and for STS
// AssumeRoleWithWebIdentity, serving fixed test credentials, for tests/io/test_s3.sh.
//
//   node imds_standin.mjs PORTFILE LOGFILE KEY_ID SECRET WEB_IDENTITY_TOKEN [ROLE]
//
// Listens on 127.0.0.1 (a free port, written to PORTFILE once listening).  Every request is
// appended to LOGFILE as one line "METHOD PATH -> STATUS" (never a header value or a body).
//   PUT  /latest/api/token                        needs X-aws-ec2-metadata-token-ttl-seconds;
//                                                 returns a fresh session token
//   GET  /latest/meta-data/iam/security-credentials/        -> ROLE   (401 without a valid token)
//   GET  /latest/meta-data/iam/security-credentials/ROLE    -> the credentials JSON
//   POST /  Action=AssumeRoleWithWebIdentity (form body)    -> the STS XML, when
//                                                 WebIdentityToken == WEB_IDENTITY_TOKEN and a
//                                                 RoleArn is given; else the STS error XML
// The session token of the served credentials is empty (radosgw would otherwise try to
// validate it as one of its own STS tokens), which vforge treats as "no token".
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';

const [portFile, logFile, keyId, secret, webToken, role = 'vf-test-role'] = process.argv.slice(2);
if (!portFile || !logFile || !keyId || !secret || !webToken) {
  console.error('usage: node imds_standin.mjs PORTFILE LOGFILE KEY_ID SECRET WEB_IDENTITY_TOKEN [ROLE]');
  process.exit(2);
}
const tokens = new Set();
const expiration = new Date(Date.now() + 6 * 3600 * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
const log = (req, status) => fs.appendFileSync(logFile, `${req.method} ${req.url.split('?')[0]} -> ${status}\n`);

function send(req, res, status, body, type = 'text/plain') {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
  log(req, status);
}

function sts(req, res, body) {
  const f = new URLSearchParams(body);
  if (f.get('Action') !== 'AssumeRoleWithWebIdentity' || !f.get('RoleArn') ||
      f.get('WebIdentityToken') !== webToken || !f.get('RoleSessionName')) {
    return send(req, res, 400,
      '<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>' +
      '<Code>InvalidIdentityToken</Code><Message>the web identity token is not valid</Message>' +
      '</Error><RequestId>standin</RequestId></ErrorResponse>', 'text/xml');
  }
  send(req, res, 200,
    '<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">' +
    '<AssumeRoleWithWebIdentityResult><Credentials>' +
    `<AccessKeyId>${keyId}</AccessKeyId><SecretAccessKey>${secret}</SecretAccessKey>` +
    `<SessionToken></SessionToken><Expiration>${expiration}</Expiration></Credentials>` +
    `<AssumedRoleUser><Arn>${f.get('RoleArn')}/${f.get('RoleSessionName')}</Arn></AssumedRoleUser>` +
    '</AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>standin</RequestId>' +
    '</ResponseMetadata></AssumeRoleWithWebIdentityResponse>', 'text/xml');
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    const path = req.url.split('?')[0];
    if (req.method === 'POST' && path === '/') return sts(req, res, body);
    if (req.method === 'PUT' && path === '/latest/api/token') {
      const ttl = Number(req.headers['x-aws-ec2-metadata-token-ttl-seconds']);
      if (!(ttl >= 1 && ttl <= 21600)) return send(req, res, 400, 'missing or bad ttl header');
      const t = crypto.randomBytes(24).toString('base64');
      tokens.add(t);
      return send(req, res, 200, t);
    }
    if (req.method === 'GET' && path.startsWith('/latest/meta-data/')) {
      if (!tokens.has(req.headers['x-aws-ec2-metadata-token'])) return send(req, res, 401, 'Unauthorized');
      if (path === '/latest/meta-data/iam/security-credentials/') return send(req, res, 200, role);
      if (path === `/latest/meta-data/iam/security-credentials/${role}`) {
        return send(req, res, 200, JSON.stringify({
          Code: 'Success', LastUpdated: new Date().toISOString(), Type: 'AWS-HMAC',
          AccessKeyId: keyId, SecretAccessKey: secret, Token: '', Expiration: expiration,
        }, null, 2), 'application/json');
      }
    }
    send(req, res, 404, 'Not Found');
  });
});
server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(server.address().port)));
for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => server.close(() => process.exit(0)));
