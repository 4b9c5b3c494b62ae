"""Passwords on command lines.

Each tool's password flag, quoted or not, and ``echo ... | tool --password-stdin``.

Each rule's examples and look-alikes beyond the first example are in
``commands.toml`` beside this module.
"""

from __future__ import annotations

from reflexkit.redaction.checks import (
    _secret,
    _tool_password_check,
)
from reflexkit.redaction.rules._base import Rule, _fake, _rule
from reflexkit.redaction.rules._patterns import (
    _STDIN_READER,
)
from reflexkit.redaction.shapes import (
    _QUOTED,
    value_is_secret,
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
        r"|\baz\b[^\n]*?\blogin\b[^\n]*?[ \t](?:-p|--password)[ \t]+"
        r"|\brabbitmqctl\b[^\n]*?\b(?:add_user|change_password)[ \t]+[^\s]+[ \t]+"
        r"|\bnet[ \t]+use\b[^\n]*?[ \t]/user:[^\s]+[ \t]+"
        r"|(?:\bPDO|\bmysqli)(?:->|::)__construct\([ \t]*(?:" + _QUOTED + r")[ \t]*,[ \t]*"
        r"(?:" + _QUOTED + r")[ \t]*,[ \t]*)"  # PHP's stack traces print the arguments
        r"(?P<secret>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"]+)",
        r"(?:mongo[a-z]*|twine|az)[ \t](?:[^\n]*[ \t])?-(?:p|-password)[ \t]"
        r"|(?:sqlcmd|bcp|osql|isql|zip|zipcloak|unzip)[ \t](?:[^\n]*[ \t])?-P"
        r"|7z[az]?[ \t](?:[^\n]*[ \t])?-p|htpasswd[ \t]|smbclient|rpcclient|smbmap|smbcacls"
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
        r"(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s|;&<>]+)[ \t]*(?:$|(?=\|[^\n]*"
        + _STDIN_READER
        + r")))",
        _STDIN_READER,
        ("password-stdin", "sudo", "chpasswd", "--stdin"),
        lambda m: value_is_secret(_secret(m).strip("\"'"), 2),
        example=_fake("docker login -u ci --password-stdin ghcr.io <<< ", "FakeStdinPassw0rd"),
    ),
)
"""This family's rules, in the order they are applied."""
