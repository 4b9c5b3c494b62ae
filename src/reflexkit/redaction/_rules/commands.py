"""Passwords on command lines.

Each tool's password flag, quoted or not, and ``echo ... | tool --password-stdin``.

Each rule's examples and look-alikes beyond the first example are in
``commands.toml`` beside this module.
"""

from __future__ import annotations

from reflexkit.redaction._checks import (
    _generated_check,
    _secret,
    _short_flag_check,
    _tool_password_check,
)
from reflexkit.redaction._rules._base import Rule, _fake, _rule
from reflexkit.redaction._rules._patterns import (
    _STDIN_READER,
)
from reflexkit.redaction._shapes import (
    _QUOTED,
    value_is_secret,
)

_TOOL_FLAGS: tuple[tuple[str, str], ...] = (
    ("ncftp|ncftpput|ncftpget|ncftpls|ncftpbatch", r"-p[ \t]+"),
    ("cqlsh|cypher-shell", r"-p[ \t]+"),
    ("hdbsql", r"-p[ \t]+"),
    ("tsql|isql|sqsh|fisql", r"-P[ \t]*"),
    ("rabbitmqadmin", r"-p[ \t]+"),
    ("psexec|psexec64|paexec|winexe|crackmapexec|netexec|nxc|evil-winrm|smbmap", r"-p[ \t]+"),
    ("vsql", r"-w[ \t]+"),
    ("nzsql|nzload", r"-pw[ \t]+"),
    ("plink|pscp|psftp|putty|kitty", r"-pw[ \t]+"),
    ("openssl", r"-k[ \t]+"),
    (r"dotnet[ \t]+nuget|nuget", r"(?:-p|-k|--password|--api-key|-ApiKey)[ \t]+"),
    ("codecov", r"-t[ \t]+"),
    ("influx", r"-t[ \t]+"),
    ("rar|unrar|winrar", r"-h?p(?=[^\s-])"),
    (r"ldap\w*", r"-w(?=[^\s-])"),
    ("ipmitool|mosquitto_pub|mosquitto_sub|mosquitto_rr", r"-P(?=[^\s-])"),
    (r"(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane)\b[^\n]*?\blogin", r"-p="),
    ("cmdkey", r"/pass:"),
    ("schtasks", r"/rp[ \t]+"),
    (r"sc[ \t]+(?:config|create)|sc\.exe", r"password=[ \t]*"),
)
"""Tools whose own short flag takes a password, and that flag (with what may follow it: a
space, ``=``, or the password glued on). Data: a new tool is one more line."""
_TOOL_ARGUMENTS = (
    r"\bnet[ \t]+user[ \t]+[^\s/]+[ \t]+(?=[^\s/*])"  # net user NAME PASSWORD
    r"|\bwpa_passphrase[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s]+)[ \t]+"  # wpa_passphrase SSID PASS
    r"|\bmc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)(?:[ \t]+[^\s]+){3}[ \t]+"
    r"|(?m:(?:^[ \t]*|>[ \t]*|\bredis-cli\b[^\n]*?[ \t]))AUTH[ \t]+"
    r"(?:[^\s]+[ \t]+(?=[^\s]+[ \t]*$))?"
    r"|\b(?:openssl[ \t]+passwd|mkpasswd)(?:[ \t]+-(?:salt|m|S|-method|-salt)[ \t]+[^\s-]\S*"
    r"|[ \t]+-[\w-]+)*[ \t]+(?=[^\s-])"  # openssl passwd [-6] [-salt S] PASSWORD
)
"""Commands that take a password as an argument: ``net user NAME PASSWORD``, ``wpa_passphrase
SSID PASSPHRASE``, MinIO's ``mc alias set NAME URL KEY SECRET``, Redis's ``AUTH [USER] PASS``,
``openssl passwd [-6] PASSWORD`` and ``mkpasswd PASSWORD`` (which hash what they are given)."""
_SHORT_FLAGS = r"(?:p|P|w|k|t|a|pw|pass|passwd|pwd|token|key|apikey)"
"""Short flags some tool or other reads a password or a token from."""


def _tool_flags() -> str:
    """The tools and their password flags of :data:`_TOOL_FLAGS`, as one pattern."""
    return "|".join(
        rf"(?<![\w.-])(?:{tools})(?:\.exe)?\b[^\n]*?[ \t]{flag}" for tools, flag in _TOOL_FLAGS
    )


RULES: tuple[Rule, ...] = (
    _rule(
        "cli_password",
        r"(?:\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlimport|mysqlsh)\b[^\n]*?"
        r"[ \t]-p|\bsshpass\b[^\n]*?[ \t]-p[ \t]*|\bredis-cli\b[^\n]*?[ \t]-a[ \t]+"
        r"|\b(?:docker|podman|nerdctl|buildah|skopeo|helm)\b[^\n]*?\blogin\b[^\n]*?[ \t]-p[ \t]+"
        r"|\bldap\w*\b[^\n]*?[ \t]-w[ \t]+|[ \t]-pass(?:in|out)?[ \t]+pass:"
        r"|\b(?:sqlplus|exp|imp|expdp|impdp|rman)[ \t]+[\"']?[\w$#.-]+/"
        r"|(?i:jdbc:oracle:)[a-z]+:[\w$#.-]+/"
        r"|\b(?:ipmitool|mosquitto_(?:pub|sub|rr))\b[^\n]*?[ \t]-P[ \t]+"
        r"|\bssh-keygen\b[^\n]*?[ \t]-[NP][ \t]+|\bx?freerdp3?\b[^\n]*?[ \t][/+]p:"
        r"|\b(?:rdesktop|unrar)\b[^\n]*?[ \t]-p[ \t]*|\bsnmp\w+\b[^\n]*?[ \t]-[AX][ \t]+"
        r"|\blftp\b[^\n]*?[ \t]-u[ \t]+[^\s,]+,)"
        r"(?P<secret>'[^'\n]{1,256}'|\"(?:[^\"\\\n]|\\.){1,256}\"|[^\s\"'@/]+)",
        r"mysql|mariadb|sshpass|redis-cli|sqlplus|expdp|impdp|rman|login|ldap|pass:"
        r"|(?i:jdbc:oracle:)|ipmitool|mosquitto_|ssh-keygen|freerdp|rdesktop|unrar|snmp|lftp",
        (
            "mysql",
            "mariadb",
            "sshpass",
            "redis-cli",
            "sqlplus",
            "expdp",
            "impdp",
            "rman",
            "login",
            "ldap",
            "pass:",
            "jdbc:oracle:",
            "ipmitool",
            "mosquitto_",
            "ssh-keygen",
            "freerdp",
            "rdesktop",
            "unrar",
            "snmp",
            "lftp",
        ),
        _tool_password_check,
        example=_fake("mysql -u root -p", "FakePassw0rd", " orders"),
    ),
    _rule(
        "tool_password",
        r"(?:\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop"
        r"|twine)\b[^\n]*?[ \t](?:-p|--password)[ \t]+"
        r"|\b(?:sqlcmd|bcp|osql|isql|zip|zipcloak|unzip)\b[^\n]*?[ \t]-P[ \t]*"
        r"|\b7z[az]?\b[^\n]*?[ \t]-p"
        r"|\bhtpasswd\b(?=[^\n]*[ \t]-[A-Za-z]*b)[^\n]*[ \t](?=[^\s]+[ \t]*(?:\r?\n|$))"
        r"|\b(?:smbclient|rpcclient|smbmap|smbcacls)\b[^\n]*?[ \t](?:-U|--user)[ \t=]*"
        r"[\"']?[^\s%\"']+%"
        r"|\bpoetry[ \t]+config[ \t]+(?:http-basic\.[^\s]+[ \t]+[^\s]+|pypi-token\.[^\s]+)[ \t]+"
        r"|\bgh[ \t]+secret[ \t]+set\b[^\n]*?[ \t](?:-b|--body)(?:[ \t]+|=)"
        r"|\baz\b[^\n]*?[ \t](?:-p|--password|--admin-password|--administrator-login-password)"
        r"[ \t]+"
        r"|\brabbitmqctl\b[^\n]*?\b(?:add_user|change_password)[ \t]+[^\s]+[ \t]+"
        r"|\bnet[ \t]+use\b[^\n]*?[ \t]/user:[^\s]+[ \t]+"
        r"|(?:\bPDO|\bmysqli)(?:->|::)__construct\([ \t]*(?:" + _QUOTED + r")[ \t]*,[ \t]*"
        r"(?:" + _QUOTED + r")[ \t]*,[ \t]*)"  # PHP's stack traces print the arguments
        r"(?P<secret>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"]+)",
        # Short: the tool's name alone. A trigger reaching along the line to the flag would
        # make a line of ``az -p az -p ...`` a few long hits, never dense, read match by match.
        r"(?:mongo[a-z]*|twine|az)[ \t]"
        r"|(?:sqlcmd|bcp|osql|isql|zip|zipcloak|unzip)[ \t]"
        r"|7z[az]?[ \t]|htpasswd[ \t]|smbclient|rpcclient|smbmap|smbcacls"
        r"|poetry[ \t]+config|gh[ \t]+secret[ \t]+set|rabbitmqctl|net[ \t]+use[ \t]"
        r"|(?:PDO|mysqli)(?:->|::)__construct\(",
        (
            " -p",
            "htpasswd",
            "smb",
            "rpcclient",
            "poetry",
            "secret set",
            "rabbitmqctl",
            "net use",
            "__construct(",
        ),
        _tool_password_check,
        example=_fake("sqlcmd -S db -U sa -P '", "FakeSqlcmdPassw0rd", "' -Q 'SELECT 1'"),
    ),
    _rule(
        "stdin_password",
        r"(?m:(?:(?:^[ \t]*\++[ \t]+|(?<![\w-]))"
        r"(?:echo(?:[ \t]+-[neE]+)?|printf(?:[ \t]+[\"']?%s(?:\\n)?[\"']?)?)[ \t]+"
        r"|--password-stdin[^\n]{0,256}?<<<[ \t]*)"
        r"(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s|;&<>)]+)[ \t]*"
        r"(?:$|(?=(?:[;)][^\n|]{0,256})?\|[^\n]*"
        + _STDIN_READER
        + r")))",  # ``(echo pw; echo pw) | smbpasswd -s``: each echo of the group
        _STDIN_READER,
        (
            "password-stdin",
            "sudo",
            "chpasswd",
            "--stdin",
            "with-token",
            "token-stdin",
            "smbpasswd",
            "signin",
            "runas",
        ),
        lambda m: value_is_secret(_secret(m).strip("\"'"), 2),
        example=_fake("docker login -u ci --password-stdin ghcr.io <<< ", "FakeStdinPassw0rd"),
    ),
    _rule(
        "tool_flag_password",
        "(?:"
        + _tool_flags()
        + r")(?P<secret>'[^'\n]{1,256}'|\"(?:[^\"\\\n]|\\.){1,256}\"|[^\s\"']+)",
        "|".join(f"(?:{tools})" for tools, _ in _TOOL_FLAGS),
        (),
        _tool_password_check,
        example=_fake("plink -ssh deploy@host -pw ", "FakePlinkPassw0rd"),
    ),
    _rule(
        "tool_argument_password",
        "(?:" + _TOOL_ARGUMENTS + r")(?P<secret>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s\"']+)",
        r"net[ \t]+user|wpa_passphrase|mc[ \t]+(?:alias|config)|AUTH[ \t]"
        r"|openssl[ \t]+passwd|mkpasswd",
        ("net", "wpa_passphrase", "mc", "auth", "passwd"),
        lambda m: _tool_password_check(m) and not _secret(m).isupper(),
        example=_fake("net user deploy ", "FakeNetUserPassw0rd", " /add"),
    ),
    _rule(
        "login_token",
        r"(?<![\w-])(?:login|auth|setapikey|set-api-key|authenticate|auth:token)"
        r"(?:[ \t]+--?[\w-]+(?:=[^\s]*)?){0,4}[ \t]+(?:<<<[ \t]*)?"
        r"(?=(?P<secret>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s\"'`|;&<>-][^\s\"'`|;&<>]{0,1024}))",
        r"(?:login|auth|setapikey|set-api-key|authenticate)(?:[ \t]+--?[\w-]+(?:=[^\s]*)?){0,4}"
        r"[ \t]+(?:<<<[ \t]*)?[\"']?[A-Za-z0-9_+/~-]{12}",
        ("login", "auth", "setapikey", "set-api-key"),
        _generated_check,
        example=_fake("cargo login ", "cioFake0Registry1Tok3n"),
    ),
    _rule(
        "short_flag_secret",
        r"(?<![\w-])-" + _SHORT_FLAGS + r"(?:[ \t]+|=)"
        r"(?P<secret>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s\"'`|;&<>-][^\s\"'`|;&<>]{0,1024})",
        r"[ \t]-" + _SHORT_FLAGS + r"[ \t=]",
        (" -",),
        _short_flag_check,
        example=_fake("anytool -u deploy -p ", "Xq7vL2pR9mZ4tK8w", " host"),
    ),
)
"""This family's rules, in the order they are applied."""
