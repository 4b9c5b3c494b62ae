"""Command-line passwords and tokens of tools the rule table does not name (#29, round 3).

An attacker's round of 112 command lines: 45 leaked before the tool/flag table
(``rules/commands.py``), the generic short-flag, login and name-value rules. Each line here
must lose its secret; each look-alike (paths, ports, test ids, commits, UUIDs, image tags)
must come out unchanged.
"""

from __future__ import annotations

import pytest

from reflexkit.redaction import Redactor

BARE = Redactor(environ={})
SECRET = "Xq7vL2pR9mZ4tK8w"  # noqa: S105 -- fake, generated-looking: letters and digits

COMMAND_LINES = [
    "openssl enc -aes-256-cbc -k {S} -in x",
    "openssl enc -pass pass:{S}",
    "openssl enc -pass env:FOO -k {S}",
    "ncftp -u user -p {S} host",
    "ncftpput -u user -p {S} host /",
    "vault login {S}",
    "vault login -method=token token={S}",
    "gh auth login --with-token <<< {S}",
    "echo {S} | gh auth login --with-token",
    "echo {S} | docker login -u x --password-stdin",
    "keytool -genkey -storepass {S} -keypass {S}",
    "jarsigner -storepass {S} app.jar alias",
    "keytool -importcert -storepass:env X -keypass {S}",
    "gpg --batch --passphrase {S} -c file",
    "gpg --passphrase={S}",
    "plink -pw {S} user@host",
    "pscp -pw {S} f user@host:",
    "psexec \\\\host -u admin -p {S} cmd",
    "net user admin {S} /add",
    "influx -username admin -password {S}",
    "cqlsh -u cassandra -p {S} host",
    "clickhouse-client --password {S}",
    "vsql -U dbadmin -w {S}",
    "db2 connect to sample user db2inst1 using {S}",
    "hdbsql -u SYSTEM -p {S}",
    "tsql -S srv -U sa -P {S}",
    "nzsql -u admin -pw {S}",
    "rabbitmqadmin -u admin -p {S} list queues",
    "etcdctl --user root:{S} get foo",
    "consul kv get -token={S} x",
    "nomad job run -token {S} x",
    "kubectl --token={S} get pods",
    "kubectl --token {S} get pods",
    "aws configure set aws_secret_access_key {S}",
    "curl --oauth2-bearer {S} https://x",
    "wpa_passphrase MyWifi {S}",
    "nmcli dev wifi connect MyWifi password {S}",
    "sqlcmd -S . -U sa -P{S}",
    "ansible-playbook site.yml -e 'ansible_password={S}'",
    "ansible-playbook -e ansible_become_pass={S}",
    "mc alias set myminio http://x admin {S}",
    "mc config host add s3 https://x AKIDEXAMPLE {S}",
    "rclone config create r s3 secret_access_key {S}",
    "rclone config create r s3 secret_access_key={S}",
    "svn checkout --username u --password {S} https://svn",
    "hg clone https://u:{S}@hg.example.com/r",
    "java -Djavax.net.ssl.keyStorePassword={S} -jar app.jar",
    "mvn deploy -Dpassword={S}",
    "mvn -Drepo.password={S}",
    "gradle -PsigningPassword={S}",
    "dotnet nuget add source x -p {S}",
    "dotnet nuget push x -k {S}",
    "nuget push x.nupkg -ApiKey {S}",
    "nuget setapikey {S}",
    "npm config set //registry.npmjs.org/:_authToken {S}",
    "yarn config set npmAuthToken {S}",
    "cargo login {S}",
    "cargo publish --token {S}",
    "gem push x.gem --key {S}",
    "twine upload -u __token__ -p {S} dist/*",
    "docker login --password {S}",
    "docker login -p={S}",
    "heroku auth:token {S}",
    "terraform apply -var db_password={S}",
    "terraform apply -var='db_password={S}'",
    "pulumi config set --secret dbPassword {S}",
    "fly secrets set DB_PASSWORD={S}",
    "vercel env add SECRET {S}",
    "firebase deploy --token {S}",
    "netlify deploy --auth {S}",
    "sentry-cli --auth-token {S}",
    "codecov -t {S}",
    "snyk auth {S}",
    "lpass login --password {S}",
    "ssh-keygen -p -P {S} -N {S} -f key",
    "zip -P {S} a.zip f",
    "unzip -P {S} a.zip",
    "7z x -p{S} a.7z",
    "rar a -hp{S} a.rar",
    "smbclient -U 'user%{S}' //x/y",
    "mount -t cifs //x/y /mnt -o username=u,password={S}",
    "mount -o user=u,pass={S}",
    "sshpass -p{S} ssh x",
    "redis-cli -u redis://default:{S}@host:6379",
    "redis-cli --pass {S}",
    "AUTH {S}",
    "redis> AUTH default {S}",
    "mongo 'mongodb://root:{S}@h/db?authSource=admin'",
    "pg_dump 'postgres://u:{S}@h/db' > x",
    "ALTER USER app WITH PASSWORD '{S}';",
    "CREATE USER 'app'@'%' IDENTIFIED BY '{S}';",
    "GRANT ALL ON *.* TO x IDENTIFIED BY '{S}'",
    "SET PASSWORD FOR x = PASSWORD('{S}')",
    "ldapsearch -x -D cn=admin -w{S}",
    "ldapwhoami -y pw.txt -w '{S}'",
    "snmpwalk -v3 -u u -A {S} -X {S} host",
    "ipmitool -I lanplus -H h -U u -P{S} power status",
    "xfreerdp /u:u /p:{S} /v:h",
    "wget --user=u --password {S} https://x",
    "wget --ftp-password={S}",
    "aria2c --http-passwd={S} https://x",
    "lftp -u user,{S} ftp.x",
    "ftp://anonymous:{S}@x",
    "pgbench 'postgresql://u:{S}@h/db'",
    "osql -U sa -P {S}",
]

LOOKALIKES = [
    "  \u2715 login with token Ab12Cd34Ef56Gh78 (5 ms)",  # jest's titles name tests
    "    \u2713 rejects password Ab12Cd34Ef56Gh78 (2 ms)",
    "FAIL src/auth.test.ts > login > token Ab12Cd34Ef56Gh78",  # vitest
    "  \u25cf Auth \u203a login with token Ab12Cd34Ef56Gh78",
    "FAILED tests/test_auth.py::test_token_refresh[token=Ab12Cd34Ef56Gh78] - AssertionError",
    "tests/test_keys.py::TestKeys::test_api_key_rotation[aB3dE5fG7hJ9kL1mN] PASSED",
    "commit 3f2a9c1e4b7d8a6f5e2c1b0a9d8e7f6a5b4c3d2e",
    "Merge: 3f2a9c1 4b7d8a6",
    "request_id=550e8400-e29b-41d4-a716-446655440000",
    "token_id = 550e8400-e29b-41d4-a716-446655440000",
    'File "/home/ci/src/app/auth/token_store.py", line 42, in get_token',
    "src/secrets/PasswordValidatorTest.java:17: error",
    "KeyError: 'api_key'",
    "password_hash = sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "sha256=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "integrity sha512-Xq7vL2pR9mZ4tK8wAbCdEfGhIjKlMnOp==",
    "def test_password_reset_sends_email(client, token_factory):",
    "assert validate_token('abc') is False",
    "self.secret_key = settings.SECRET_KEY",
    "password = os.environ['DB_PASSWORD']",
    "token = get_token(user_id=42)",
    "api_key: ${{ secrets.API_KEY }}",
    "mkdir -p build/outputs && cd build",
    "docker run -p 8080:80 -t myimage:latest",
    "pytest -k test_login_with_token -p no:cacheprovider",
    "git log -p 3f2a9c1e4b7d",
    "ssh -p 2222 user@host",
    "tar -xzf archive.tar.gz -C /opt/app",
    "npm ci --prefer-offline --no-audit",
    "go test -run TestTokenRefresh/case_Xq7vL2pR9mZ4 ./...",
    "--- FAIL: TestAuth/token=Ab12Cd34Ef56 (0.00s)",
    "at com.example.auth.TokenServiceImpl.validateToken(TokenServiceImpl.java:88)",
    "SECRET_KEY_BASE_LENGTH = 64",
    "keyring.backends.SecretService.Keyring",
    "The password must be at least 12 characters long",
    "Error: invalid token format, expected JWT",
    "image: ghcr.io/org/app@sha256:" + "9f86d081884c7d659a2feaa0c55ad015" * 2,
    "/tmp/pytest-of-ci/pytest-12/test_token0/Xq7vL2pR9mZ4tK8w.txt",  # noqa: S108
    "node_modules/.pnpm/@aws-sdk+credential-provider-ini@3.4.0/node_modules",
    "Downloading https://files.pythonhosted.org/packages/ab/cd/Xq7vL2pR9mZ4tK8wAbCdEfGh/pkg-1.0.whl",
    "Collecting pyjwt==2.8.0",
    "ModuleNotFoundError: No module named 'secretstorage'",
    "ERROR tests/test_x.py::test_a[api_key-Xq7vL2pR9mZ4tK8w] - ValueError",
    "cargo test auth::tests::token_expires -- --exact",
    "mypy: src/app/token.py:12: error: Incompatible types",
    "uses: actions/checkout@b4ffde65f46336ab88eb53be808477a3936bae11",
    "X-Request-Id: 6f1c9f0b2d4e4a7c8b3e5d2f1a0c9b8e",
    'etag: W/"5e3b-Xq7vL2pR9mZ4tK8w"',
    "openssl dgst -sha256 -hex file",
    "curl -k https://localhost:8443/health",
    "ls -la /etc/ssl/private",
    "kubectl -n kube-system get pods -o wide",
    "docker build -t registry.example.com/team/app:Xq7vL2pR9 .",
]


@pytest.mark.parametrize("line", COMMAND_LINES)
def test_the_secret_on_a_command_line_is_redacted(line: str) -> None:
    """Quoted, glued, after a flag, a subcommand or a name: the value goes, the rest stays."""
    text = line.replace("{S}", SECRET)
    out = BARE.redact(text).text
    assert SECRET[:6] not in out, out
    assert SECRET[-6:] not in out, out
    assert "[REDACTED:" in out, out


@pytest.mark.parametrize("text", LOOKALIKES)
def test_identifiers_test_ids_hashes_and_paths_are_left_alone(text: str) -> None:
    """Nothing is redacted inside identifiers, test ids, commit hashes, UUIDs or paths."""
    assert BARE.redact(text).text == text
