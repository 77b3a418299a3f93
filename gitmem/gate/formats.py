"""Vendor token formats the secret rules add to detect-secrets' plugins, as data.

Why a module of its own: the table of formats (a prefix, a length, an alphabet)
grows with every vendor and every corpus round, apart from the generic rules for
passwords in prose and command lines (``secret_rules``), which come after these in
``secret_rules.EXTRA_PATTERNS``: same order, same verdicts. Every rule is (name,
pattern, why detect-secrets misses it).
"""

from __future__ import annotations

# -- secrets: formats and shapes detect-secrets misses --------------------------------------

_END = r"(?![A-Za-z0-9_-])"  # \b does not work after a token that may end in '-'
FORMATS: list[tuple[str, str, str]] = [
    # (name, regex, one-line reason)
    ("aws-secret-access-key-unquoted",
     r"(?i)aws.{0,20}?(?:secret|key).{0,20}?[=:]\s*[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
     "AWSKeyDetector's secret-key regex requires quotes (~/.aws/credentials has none)"),
    ("github-fine-grained-pat", r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}" + _END,
     "GitHubTokenDetector only knows ghp_/gho_/ghu_/ghs_/ghr_"),
    ("slack-app-token", r"\bxapp-\d-[A-Z0-9]{8,}-\d{8,}-[a-f0-9]{32,}\b",
     "SlackDetector only knows xox?- tokens and webhooks"),
    ("stripe-test-or-webhook-secret", r"\b(?:[rs]k_test_[A-Za-z0-9]{24,}|whsec_[A-Za-z0-9+/]{32,})",
     "StripeDetector only knows *_live_ keys"),
    ("mailgun-api-key", r"\bkey-[0-9a-f]{32}\b", "no Mailgun plugin"),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", "NpmDetector needs the .npmrc '//host/:_authToken=' form"),
    ("artifactory-reference-token", r"\bcmVmdGtu[A-Za-z0-9]{50,}",
     "ArtifactoryDetector only knows AKC/AP keys; reference tokens are base64('reftkn...')"),
    ("dockerhub-pat", r"\bdckr_pat_[A-Za-z0-9_-]{27,}", "no Docker Hub plugin"),
    ("openai-new-style-key", r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}",
     "OpenAIDetector needs 20 alphanumerics right before T3BlbkFJ; new keys also use - and _"),
    ("anthropic-api-key", r"\bsk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_-]{80,}", "no Anthropic plugin"),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{34,}\b", "no Hugging Face plugin"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}" + _END, "no Google API key plugin"),
    ("google-oauth-client-secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}" + _END, "no Google OAuth plugin"),
    ("firebase-fcm-server-key", r"\bAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}", "no FCM plugin"),
    ("azure-sas-signature", r"[?&]sig=[A-Za-z0-9%+/=]{20,}",
     "AzureStorageKeyDetector only knows AccountKey=; SAS URLs carry sig="),
    ("azure-ad-client-secret",
     r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
     "no Entra ID (Azure AD) client secret plugin"),
    ("heroku-api-key", r"\bHRKU-[A-Za-z0-9_-]{58,}", "no Heroku plugin"),
    ("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", "no DigitalOcean plugin"),
    ("vault-token", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}", "no HashiCorp Vault plugin"),
    ("terraform-cloud-token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}", "no Terraform Cloud plugin"),
    ("doppler-token", r"\bdp\.(?:st|ct|pt|sa|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}\b",
     "no Doppler plugin"),
    ("alibaba-access-key-id", r"\bLTAI[A-Za-z0-9]{12,20}\b", "no Alibaba Cloud plugin"),
    ("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", "no Databricks plugin"),
    ("discord-webhook-url",
     r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{60,}",
     "DiscordBotTokenDetector only knows bot tokens"),
    ("meta-or-square-access-token", r"\bEAA[A-Z][A-Za-z0-9_-]{56,}",
     "no Facebook plugin; SquareOAuthDetector only knows sq0csp- secrets"),
    ("twitter-bearer-token", r"\bA{20,}[A-Za-z0-9%]{50,}", "no X/Twitter plugin"),
    ("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", "no Shopify plugin"),
    ("linear-api-key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", "no Linear plugin"),
    ("notion-token", r"\b(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})\b", "no Notion plugin"),
    ("atlassian-api-token", r"\bATATT3[A-Za-z0-9_=-]{100,}", "no Atlassian plugin"),
    ("postman-api-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", "no Postman plugin"),
    ("grafana-token", r"\b(?:glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}\b|glc_[A-Za-z0-9+/]{32,})",
     "no Grafana plugin"),
    ("sentry-dsn", r"\bhttps?://[a-f0-9]{32}(?::[a-f0-9]{32})?@[A-Za-z0-9.-]+/\d+",
     "no Sentry plugin (BasicAuthDetector needs user:pass@)"),
    ("sentry-auth-token", r"\bsntry[us]_[A-Za-z0-9_=+/-]{40,}", "no Sentry plugin"),
    ("new-relic-key", r"\b(?:NRAK-[A-Z0-9]{27}|[a-f0-9]{36}NRAL)\b", "no New Relic plugin"),
    ("mapbox-secret-token", r"\bsk\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{20,}",
     "no Mapbox plugin; JwtTokenDetector rejects it (2nd part is not JSON)"),
    ("private-key-block",
     r"-{4,5} ?BEGIN [A-Za-z0-9 ]*(?:PRIVATE|SECRET)[A-Za-z0-9 ]*-{4,5}|-----BEGIN OpenVPN Static key",
     "PrivateKeyDetector misses 'ENCRYPTED PRIVATE KEY', SSH2 (SECSH) and OpenVPN static keys"),
    ("putty-private-key", r"\bPuTTY-User-Key-File-\d+:", "PrivateKeyDetector only knows version 2"),
    ("age-secret-key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b", "no age plugin"),
    ("wireguard-private-key", r"(?im)^\s*PrivateKey\s*=\s*[A-Za-z0-9+/]{42,43}=", "no WireGuard plugin"),
    # --- generic rules ---
    ("hex-near-key",
     r"(?i)(?:(?<!cache )(?<!action )(?<!build )\b(?:key|hmac|salt)\b|키|キー|密钥|密鑰)"
     r"(?:(?!sha\d|md5|hash|digest|checksum|etag|fingerprint|integrity|commit)[^\n]){0,24}?"
     r"(?-i:(?<![0-9A-Za-z.])(?<![0-9A-Za-z][-_])[0-9a-f]{32,}(?![0-9A-Za-z]))",  # not inside an id (pnpm-store-<hash>)
     "32+ lowercase hex right after 'key'/'hmac'/'salt': the hex entropy plugin would catch it, at the cost of every commit id"),
    ("url-userinfo-password",
     r"(?i)\b[a-z][a-z0-9+.-]{1,15}://([^\s:/@]*):(?![<{$*]|%\()(?!(?-i:[A-Z_]+)@|(?:password|passwd|pass|pwd|secret|changeme)@|\1@)(?P<value>[^\s/@]+)@[^\s/@]+",
     "BasicAuthDetector misses an empty user (redis://:pw@) and passwords with !&*+=?#@"
     " (a password that repeats the user, postgres:postgres@, is a well-known default)"),
    ("query-or-dsn-password", r"(?i)[?&;]\s*(?:password|passwd|pwd|pass)=(?![<{$*]|%\()[^&;\s]+",
     "JDBC/ADO.NET/ODBC put the password in a key=value parameter, no plugin sees it"),
    ("authorization-header",
     r"(?i)\b(?:authorization|proxy-authorization):\s*(?:bearer|basic|token|ssws|api-?key|digest|hmac)\s+"
     r"(?![<{$])[A-Za-z0-9._~+/=-]{16,}", "opaque credentials in pasted curl commands"),
    ("credential-header", r"(?i)\bx-[\w-]{0,30}?(?:key|token|secret|auth)[\w-]{0,30}\s*:\s*(?![<{$])[A-Za-z0-9._~+/=-]{16,}",
     "X-Api-Key: ... style headers"),
    ("session-cookie",
     r"(?i)\b(?:[a-z0-9]{1,20}_)?(?:session(?:id)?|sid|connect\.sid|jsessionid|phpsessid|_\w*session|remember_token|csrftoken)"
     r"\s*=\s*(?![<{$])[A-Za-z0-9%._~+/=-]{20,}", "a session cookie is a login"),
    ("crypt-hash",
     r"\$(?:apr1|1|5|6|y|gy|7|2[abxy]?|argon2(?:id|i|d)|scrypt|sha1|md5)(?:\$[^\s$]+){1,3}\$[./A-Za-z0-9+=]{16,}"
     r"|\bpbkdf2_\w+\$\d+\$[^\s$]+\$[A-Za-z0-9+/=]{20,}|\{SHA\}[A-Za-z0-9+/]{27}="
     # Kerberos tickets (Kerberoasting, AS-REP), NetNTLMv1/v2 captures, pwdump lines
     r"|\$krb5(?:tgs|asrep|pa)\$\d+\$\S{20,}"
     r"|(?<![\w.$-])[\w.$-]{1,64}::[\w.-]{1,64}:[0-9a-fA-F]{16}:[0-9a-fA-F]{32}:[0-9a-fA-F]{40,}"
     r"|(?m:^[^\s:]{1,64}:\d{1,10}:[0-9a-fA-F]{32}:[0-9a-fA-F]{32}:::)"
     # MySQL's native password hash (*HEX40), PostgreSQL's md5 (md5 + HEX32), Cisco type 7
     r"|(?<![\w*])\*[0-9A-F]{40}(?![0-9A-Za-z])|(?<![\w$])md5[0-9a-f]{32}(?![0-9A-Za-z])"
     r"|(?i:\b(?:password|secret|key-string)\s+7\s+)[0-9A-F]{8,}\b",
     "htpasswd, /etc/shadow, bcrypt, argon2, Django, Kerberos, NTLM, MySQL and PostgreSQL hashes crack offline"),
    ("pgpass-line", r"(?<![\w.:-])[\w.-]+:(?:\d{1,5}|\*):[\w*.-]+:[\w*.-]+:(?![*$<{])[^\s:]{4,}",
     "a ~/.pgpass line: host:port:db:user:password"),
    ("xml-password-element",
     r"(?i)<((?:\w+)?(?:password|passwd|secret|token|api_?key|access_?key|client_?secret))>(?![$<{])[^<\s]{4,}</\1>"
     # ... with attributes (FileZilla's <Pass encoding="base64">), "pass" too when the value has a digit or symbol
     r"|<((?i:(?:\w+)?(?:pass|password|passwd)))\s[^<>\n]{0,80}>"
     r"(?![$<{])(?=[^<\s]{0,200}[\d+/=!@#%^&*])[^<\s]{8,}</\2>",
     "Maven settings.xml, .NET config, FileZilla's sitemanager.xml"),
    ("alchemy-infura-rpc-key",
     r"\b[a-z0-9-]+\.g\.alchemy\.com/(?:v2|nft/v[23])/[A-Za-z0-9_-]{32}" + _END
     + r"|\binfura\.io/v3/[0-9a-f]{32}(?![0-9A-Za-z])",
     "an Ethereum RPC URL holds the project's key in its path (Alchemy, Infura)"),
    ("brevo-key", r"\bx(?:keysib|smtpsib)-[0-9a-f]{64}-[A-Za-z0-9]{16}" + _END,
     "Brevo (Sendinblue) API and SMTP keys"),
    ("jdbc-oracle-credentials",
     r"\bjdbc:oracle:(?:thin|oci):(?![$<{])[^/\s:@\"'();]{1,64}/(?![$<{])(?=[^@\s\"']{0,64}[\d!#$%^&*+=?])[^@\s\"']{4,64}@",
     "jdbc:oracle:thin:USER/PASSWORD@host: Oracle's URL puts the password before the @"),
    ("terraform-state-plaintext",
     r"\"plaintext_value\"\s*:\s*\"(?![$<{])(?!(?i:placeholder|changeme|redacted|dummy|example|sample|secret|"
     r"password|test|todo|none|null)\")[^\"\s]{6,}\"",
     "a terraform.tfstate keeps a github_actions_secret's value in plaintext_value"),
    ("mysql-inline-password", r"\bmysql\w*\b[^\n]*?(?<!\S)-p(?:'[^'\s]{4,}'|\"[^\"\s]{4,}\"|[^\s'\"]{4,})",
     "mysql -pSECRET on a command line"),
]
