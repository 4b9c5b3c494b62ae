"""A name that says secret, set to a value.

``NAME=value``, ``--flag value``, YAML, tables, name/value pairs, SQL.

Each rule's examples and look-alikes beyond the first example are in
``assignments.toml`` beside this module.
"""

from __future__ import annotations

from reflexkit.redaction._checks import (
    _assignment_check,
    _field_input_check,
    _flag_check,
    _literal_check,
    _loc_input_check,
    _name_value_check,
    _named_check,
    _named_value_check,
    _pair_check,
    _secret,
    _sequence_check,
    _spaced_check,
    _sql_check,
    _table_check,
)
from reflexkit.redaction._rules._base import Rule, _fake, _rule
from reflexkit.redaction._rules._patterns import (
    _CELL,
    _NAME_TRIGGER,
    _VALUE,
    ASSIGN,
)
from reflexkit.redaction._shapes import (
    _QUOTED,
    _name_strength,
    value_is_secret,
)

RULES: tuple[Rule, ...] = (
    _rule(
        "secret_flag",
        r"(?<![\w-])--?(?P<name>[A-Za-z][\w.-]*)[ \t]+"
        r"(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'-][^\s\"']*)",
        r"(?i:--?[a-z-]*(?:pass|pwd|secret|token|key|credential|auth)[a-z_-]*[ \t])",
        ("pass", "pwd", "secret", "token", "key", "credential", "auth"),
        _flag_check,
        example=_fake("deploy --db-password ", "Fl4g-fake-pw"),
    ),
    _rule(
        "powershell_env",
        r"(?i:\$env:)(?P<name>[A-Za-z_]\w{0,80})[ \t]*(?P<sep>=)[ \t]*" + _VALUE,
        r"(?i:\$env:[a-z_0-9]*(?:pass|pwd|secret|token|key|auth|credential))",
        ("$env:",),
        _assignment_check,
        example=_fake('$env:API_TOKEN = "', "FakePowerShellTok3n", '"'),
    ),
    _rule(
        "yaml_block_secret",
        r"(?P<name>(?<![\w.])[A-Za-z_][\w.-]{0,80})[ \t]*:[ \t]*(?:!{1,2}[\w/:.-]*[ \t]+)?"
        r"[|>][+-]?[ \t]*\r?\n"  # ``password: !!binary |``: a tag before the block
        r"[ \t]+(?P<secret>[^\s][^\n]*?)[ \t]*(?=\r?\n|\Z)",
        r"(?i:(?:pass|pwd|secret|token|key|auth|credential)[a-z0-9_.-]{0,40}[ \t]*:[ \t]*"
        r"(?:![!\w/:.-]*[ \t]+)?[|>])",
        (": |", ": >", ":|", ":>", " |", " >"),
        lambda m: value_is_secret(_secret(m), _name_strength(m.group("name"))),
        example=_fake("password: |\n  ", "FakeYamlBlockPassw0rd"),
    ),
    _rule(
        "php_dump_secret",
        r"\[[\"'](?P<name>[^\"'\n]{1,80})[\"']\]=>\s*string\(\d+\)[ \t]*\"(?P<secret>[^\"\n]*)\"",
        r"(?i:(?:pass|pwd|secret|token|key|auth|credential)[a-z0-9_.-]{0,40}[\"']\]=>)",
        ("]=>",),
        lambda m: value_is_secret(_secret(m), _name_strength(m.group("name"))),
        example=_fake('["password"]=> string(16) "', "FakePhpDumpPassw0", '"'),
    ),
    _rule(
        "sql_parameters",
        r"\[SQL: (?i:insert|replace)[ \t]+(?i:into)[ \t]+[^\n(]*\((?P<columns>[^)\n]*)\)"
        r"[^\n]*\][ \t]*\r?\n\[parameters: (?P<secret>\([^\n]*\))\]",
        r"\[SQL: (?i:insert|replace)[^\n]*(?i:pass|pwd|secret|token|key|credential)[^\n]*\r?\n"
        r"\[parameters: \(",
        ("[parameters:",),
        lambda m: any(
            _name_strength(column.strip().strip('"`[]')) == 2  # noqa: PLR2004
            for column in m.group("columns").split(",")
        ),
        example=_fake(
            "[SQL: INSERT INTO users (name, password) VALUES (?, ?)]\n[parameters: ('ci', '",
            "FakeSqlParamPw0",
            "')]",
        ),
    ),
    _rule(
        "sql_password",
        r"(?i:(?:(?<=[ \t])(?P<bare>password)|identified[ \t]+by"
        r"|set[ \t]+password[ \t]+for[ \t]+[^\n=]{1,80}=(?:[ \t]*(?:old_)?password[ \t]*\()?"
        r"|\buser[ \t]+[^\s'\"]{1,80}[ \t]+using)[ \t]*=?[ \t]*)"  # DB2: ``user NAME using PASS``
        r"(?P<secret>'(?:[^'\n]|'')+'|\"[^\"\n]+\"|(?<=using )[^\s'\";]+)",
        r"(?i:password[ \t]*=?[ \t]*'|identified[ \t]+by|set[ \t]+password|user[ \t][^\n]*using)",
        ("password", "identified", "using"),
        _sql_check,
        example=_fake("CREATE USER app WITH PASSWORD '", "FakeSqlPassw0rd", "';"),
    ),
    _rule(
        "field_input",
        r"(?:(?m:^)(?P<name>[A-Za-z_][\w.\[\]-]{0,120})[ \t]*\r?\n[ \t]+[^\n]*?"
        r"\[type=[\w.]+,[ \t]*input_value="
        r"|[\"']loc[\"']:[ \t]*[\[(](?:[^\])\n]*?,[ \t]*)?"
        r"[\"'](?P<loc>[^\"'\n]{1,80})[\"'],?[ \t]*[\])]"
        r"[ \t]*,[ \t]*[\"']msg[\"']:[ \t]*(?:" + _QUOTED + r")[ \t]*,[ \t]*[\"']input[\"']:[ \t]*)"
        r"(?P<secret>" + _QUOTED + r"|[^,\]\n]+)",
        r"(?m:^[A-Za-z_][\w.\[\]-]{0,120}[ \t]*\r?\n[ \t]+[^\n]*\[type=[\w.]+,[ \t]*input_value=)"
        r"|[\"']loc[\"']:[ \t]*[\[(]",
        ("input_value=", '"loc"', "'loc'"),
        lambda m: _field_input_check(m) if m.group("name") else _loc_input_check(m),
        example=_fake(
            "db.password\n  String should have at least 24 characters [type=string_too_short,",
            " input_value='FakePydanticPw0', input_type=str]",
        ),
    ),
    _rule(
        "secret_wrapper",
        r"\b(?:SecretStr|SecretBytes|SecretString|SecretBox|Secret|Sensitive|Password)"
        r"\([ \t]*[bB]?(?P<secret>" + _QUOTED + r")[ \t]*\)",
        r"(?:Secret[A-Za-z]*|Sensitive|Password)\([ \t]*[bB]?[\"']",
        (
            "secret(",
            "secretstr(",
            "secretbytes(",
            "secretstring(",
            "secretbox(",
            "sensitive(",
            "password(",
        ),
        _literal_check,
        example=_fake("expected SecretStr('", "FakeSecretStrValue0", "')"),
    ),
    _rule(
        "name_value_tuple",
        r"(?:[(\[][ \t]*(?P<q>[\"'])(?P<name>[A-Za-z_][\w.-]{0,80})(?P=q)[ \t]*,[ \t]*"
        r"|\{[ \t]*(?P<atom>[a-z][\w]{0,80})[ \t]*,[ \t]*(?:<<)?"  # Erlang: {password,<<"..">>}
        r"|(?<![\w:])(?P<keyword>:[A-Za-z_][\w.-]{0,80})[ \t]+)"  # EDN, Lisp: :password "..."
        r"(?P<secret>" + _QUOTED + r")(?=[ \t]*(?:>>)?[ \t]*[)\]},:])",
        r"[(\[][ \t]*[\"'][\w.-]{0,40}(?i:pass|pwd|secret|token|key|auth|credential|dsn)"
        r"[\w.-]{0,40}[\"'][ \t]*,"
        r"|[{:][a-z_]{0,40}(?i:pass|pwd|secret|token|key|auth|credential|dsn)[\w.-]{0,40}[ \t,]",
        ("',", '",', ",<<", ' "', " '"),
        _named_check,
        example=_fake('[("STRIPE_SECRET", "', "Fake0Tuple1Pair2Secret3", '")]'),
    ),
    _rule(
        "xml_name_value",
        r"<name>(?P<name>[^<\n]{1,80})</name>\s*<value>(?P<secret>[^<\n]{1,300})</value>",
        r"<name>[^<\n]{0,40}(?i:pass|pwd|secret|token|key|auth|credential)",
        ("<name>",),
        lambda m: value_is_secret(_secret(m), _name_strength(m.group("name"))),
        context_lines=1,
        example=_fake("<name>Private-Token</name><value>", "FakeXmlPairToken0", "</value>"),
    ),
    _rule(
        "name_value_pair",
        r"(?i:\bname)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<name>[A-Za-z_][\w.-]{0,80})[\"']?"
        r"(?:[^\n{}\[\]]{0,80}?|[ \t]*\r?\n[ \t]*)"
        r"(?i:\bvalue)[\"']?[ \t]*[:=][ \t]*(?P<secret>" + _QUOTED + r"|[^\s\"',;)\]}]+)",
        r"(?i:\bname[\"']?[ \t]*[:=][ \t]*[\"']?[\w.-]{0,40}"
        r"(?:pass|pwd|secret|token|key|auth|credential|sess|sid|dsn))",
        ("name",),
        _name_value_check,
        context_lines=1,
        example=_fake('{"name": "DB_PASSWORD", "value": "', "FakeEcsPassw0rd", '"}'),
    ),
    _rule(
        "table_secret",
        r"(?m:^[ \t]*" + _CELL + r"?(?P<name>[A-Za-z_][\w.-]{0,80})"
        r"(?:[ \t]{2,}|\t[ \t]*|[ \t]*" + _CELL + r")"
        r"(?P<secret>(?:(?!│|┃)[^\s|]){8,})[ \t]*" + _CELL + r"?\r?$)",
        r"(?m:^[ \t]*" + _CELL + r"?[\w.-]{0,40}(?i:pass|pwd|secret|token|credential|key)"
        r"[\w.-]{0,40}(?:[ \t]{2,}|\t|[ \t]*" + _CELL + r")[^\s|]{8,}[ \t]*" + _CELL + r"?\r?$)",
        ("pass", "pwd", "secret", "token", "credential", "key"),
        _table_check,
        example=_fake("db_password     ", "Fake0Table1Passw0rd"),
    ),
    _rule(
        "secret_sequence",
        r"(?P<name>(?<![\w.])[A-Za-z_][\w.-]{0,80}|\"[^\"\n]{1,80}\"|'[^'\n]{1,80}')"
        r"[ \t]*(?::|=)[ \t]*(?P<secret>[(\[{][ \t(\[]{0,4}(?:" + _QUOTED + r")"
        r"(?:[ \t]*[,)\]]{1,3}[ \t]*[(\[]{0,2}[ \t]*(?:"
        + _QUOTED
        + r")){1,64}[ \t)\]]{0,4}[)\]}])",
        r"(?i:(?:pass|pwd|secret|token|credential|pasw|psw)[a-z0-9_.-]{0,40}[\"']?[ \t]*[:=]"
        r"[ \t]*[(\[{][ \t(\[]{0,4}[\"'])",
        ("pass", "pwd", "secret", "token", "credential", "pasw", "psw"),
        _sequence_check,
        example=_fake('password = ("deploy", "', "Fake0Tuple9Passw0rd", '")'),
    ),
    _rule(
        "literal_pair_password",
        r"(?:[(\[]|\blogin\()[ \t]*(?P<q>[\"'])[^\"'\s]{1,64}(?P=q)[ \t]*,[ \t]*"
        r"(?P<secret>\"[^\"\n]{6,128}\"|'[^'\n]{6,128}')[ \t]*[)\],]",
        r"(?i:passw|passphrase|pwd|cred|login\()",  # short: a line of them reads as dense
        ("pass", "pwd", "login", "cred"),
        _pair_check,
        gate=r"[(\[][ \t]*[\"'][^\"'\s]{1,64}[\"'][ \t]*,[ \t]*[\"'][^\"'\n]{6}",
        example=_fake('smtp.login("ci@example.com", "', "Fake0Login9Passw0rd", '")'),
    ),
    _rule(
        "spaced_assignment",
        r"(?m:^[ \t]*(?:(?:export|declare[ \t]+-x|setenv)[ \t]+|\+{1,3}[ \t]+)?)"
        r"(?P<name>[A-Za-z_][\w]{0,80})=(?P<secret>[^\s\"'`\\][^\n\"'`]{0,1024}?)[ \t]*(?=\r?$)",
        r"(?m:^[ \t]*(?:(?:export|declare[ \t]+-x|setenv)[ \t]+|\+{1,3}[ \t]+)?[A-Za-z_0-9]{0,40}"
        r"(?i:pass|pwd|secret|token|key|auth|credential|psk|phrase|mnemonic|seed)[A-Za-z_0-9]{0,40}"
        r"=[^\s\"'`]{1,256}[ \t]+[^\s])",
        ("pass", "pwd", "secret", "token", "key", "auth", "credential", "psk", "phrase", "seed"),
        _spaced_check,
        example=_fake("JWT_SECRET=", "correct horse battery staple"),
    ),
    _rule(
        "secret_assignment",
        r"(?P<name>(?<![\w.])(?<!\w:)(?<!\$\{)[A-Za-z_][\w.-]{0,80}|\"[^\"\n]{1,80}\"|'[^'\n]{1,80}')"
        r"[ \t]*(?P<sep>" + ASSIGN + r")"
        r"[ \t]*" + _VALUE,
        _NAME_TRIGGER,
        (
            "pass",
            "pwd",
            "secret",
            "token",
            "key",
            "auth",
            "credential",
            "cookie",
            "sig",
            "dsn",
            "pw",
            "psk",
            "sess",
            "sid",
            "pasw",
            "psw",
            "pssw",
            "connectionstring",
        ),
        _assignment_check,
        example=_fake("DB_PASSWORD=", "correcthorsebatterystaple"),
    ),
    _rule(
        "named_value",
        r"(?<![\w.-])(?P<name>[A-Za-z_][\w.-]{0,80})[ \t]+"
        r"(?=(?P<secret>'[^'\n]{8,256}'|\"[^\"\n]{8,256}\"|[^\s\"'`,;|&<>]{12,1024})(?=[\s\"'`,;]|\Z))",
        r"(?i:(?:pass|pwd|secret|token|key|credential)[\w.-]{0,40}"
        r"[ \t]+[\"']?[A-Za-z0-9_+/~-]{12})",
        ("pass", "pwd", "secret", "token", "key", "credential"),
        _named_value_check,
        example=_fake("aws configure set aws_secret_access_key ", "Xq7vL2pR9mZ4tK8wFake"),
    ),
)
"""This family's rules, in the order they are applied."""
