"""Known token formats: each vendor's prefix, length and alphabet.

Cloud keys, API tokens, webhooks and JWTs.

Each rule's examples and look-alikes beyond the first example are in
``vendors.toml`` beside this module.
"""

from __future__ import annotations

from reflexkit.redaction._checks import (
    _aws_context_check,
    _generated,
    _jwt_check,
    _seed_phrase_check,
    _telegram_check,
)
from reflexkit.redaction._rules._base import Rule, _fake, _rule
from reflexkit.redaction._rules._patterns import (
    _B,
    _E,
)

RULES: tuple[Rule, ...] = (
    _rule(
        "jwt",
        # Parts joined by ``.``, ``%2E`` (URL-encoded) or ``\.``; header and payload may wrap
        # onto the next line, and so may a signature after a line that ends with the dot.
        r"eyJ[A-Za-z0-9_-]{5,}(?:\r?\n[ \t]*[A-Za-z0-9_-]+)?(?:\.|%2[Ee]|\\\.)"
        r"(?:ey[A-Za-z0-9_-]{5,}(?:\r?\n[ \t]*[A-Za-z0-9_-]+)?(?:\.|%2[Ee]|\\\.)"
        r"(?:[A-Za-z0-9_-]+|\r?\n[ \t]*[A-Za-z0-9_-]{16,}(?![^\s]))?"
        r"|[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{8,})",
        r"eyJ[A-Za-z0-9_-]{5,}(?:\.|%2[Ee]|\\\.)(?:ey|[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{8})",
        ("eyj",),
        _jwt_check,
        context_lines=1,
        example=_fake("eyJhbGciOiJIUzI1NiJ9", ".eyJzdWIiOiJmYWtlIn0", ".c2lnbmF0dXJlLWZha2U"),
    ),
    _rule(
        "onepassword_secret_key",
        _B + r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}" + _E,
        r"A3-[A-Z0-9]{6}-",
        ("a3-",),
        example=_fake("A3-", "FAKE12-FAKE34-FAKE5-FAKE6-FAKE7-FAKE8"),
    ),
    _rule(
        "anthropic_api_key",
        _B + r"sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{20,}",
        r"sk-ant-",
        ("sk-ant-",),
        example=_fake("sk-ant-api03-", "FAKEfake" * 10, "AA"),
    ),
    _rule(
        "openai_api_key",
        _B + r"sk-(?:proj|svcacct|admin|None|or-v1)-[A-Za-z0-9_-]{20,}"
        r"|"
        + _B
        + r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"
        + _E
        + r"|"
        + _B
        + r"sk-[A-Za-z0-9][A-Za-z0-9_-]{30,}",
        r"sk-[A-Za-z0-9]",
        ("sk-",),
        example=_fake("sk-proj-", "Fake0Key1Only2For3Docs4Not5Real6"),
    ),
    _rule(
        "aws_access_key",
        r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)"
        r"[A-Z0-9]{16}(?![A-Za-z0-9])",
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}",
        markers=(
            "akia",
            "asia",
            "abia",
            "acca",
            "agpa",
            "aida",
            "aroa",
            "aipa",
            "anpa",
            "anva",
            "apka",
            "a3t",
        ),
        example=_fake("AKIA", "FAKEEXAMPLE12345"),
    ),
    _rule(
        "aws_secret_key",
        r"(?<![A-Za-z0-9/+])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        r"(?i:aws|secret)",
        ("aws", "secret"),
        _aws_context_check,
        gate=r"[A-Za-z0-9/+]{40}",
        example=_fake("aws_secret=", "/Fake0Secret1Access2Key3For4Docs5Only6+A"),
    ),
    _rule(
        "gcp_api_key",
        _B + r"AIza[0-9A-Za-z_-]{35}" + r"(?![0-9A-Za-z_-])",
        r"AIza[0-9A-Za-z_-]{35}",
        markers=("aiza",),
        example=_fake("AIza", "FakeFakeFakeFakeFakeFakeFakeFake123"),
    ),
    _rule(
        "gcp_oauth_token",
        _B + r"ya29\.[0-9A-Za-z_-]{20,}",
        r"ya29\.",
        markers=("ya29.",),
        example=_fake("ya29.", "Fake-oauth-token-for-docs"),
    ),
    _rule(
        "google_oauth_client_secret",
        _B + r"GOCSPX-[A-Za-z0-9_-]{20,}",
        r"GOCSPX-",
        markers=("gocspx-",),
        example=_fake("GOCSPX-", "FakeClientSecretForDocs12"),
    ),
    _rule(
        "azure_storage_key",
        r"(?i:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey)=(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
        r"(?i:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey)=",
        ("key=",),
        example=_fake("AccountKey=", "RmFrZUF6dXJlU3RvcmFnZUtleUZvckRvY3M=", ";"),
    ),
    _rule(
        "azure_sas_signature",
        r"(?i:[?&;]sig=)(?P<secret>[A-Za-z0-9%+/=_-]{20,})",
        r"(?i:sig=)",
        ("sig=",),
        example=_fake("?sv=2022-11-02&sig=", "RmFrZVNhc1NpZ25hdHVyZQ%3D%3D"),
    ),
    _rule(
        "azure_client_secret",
        r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])",
        r"\dQ~",
        ("q~",),
        example=_fake("abc8Q~", "Fake.Client~Secret_For-Docs1234567"),
    ),
    _rule(
        "azure_devops_pat",
        _B + r"[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}" + _E,
        r"AZDO",
        ("azdo",),
        example=_fake("Fake" * 19, "AZDO", "Fake"),
    ),
    _rule(
        "github_token",
        _B + r"(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{40,255})" + _E,
        r"gh[pousr]_|github_pat_",
        ("gh", "github_pat_"),
        example=_fake("ghp_", "FakeTokenForDocsOnly0123456789abcdef"),
    ),
    _rule(
        "gitlab_token",
        _B + r"(?:gl(?:pat|dt|rt|rtr|ptt|cbt|imt|agent|soat|ffct|ft|oas|wt|sa)-"
        r"[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]{2,}){0,2}|GR1348941[A-Za-z0-9_-]{20,})",
        r"gl(?:pat|dt|rt|rtr|ptt|cbt|imt|agent|soat|ffct|ft|oas|wt|sa)-|GR1348941",
        ("gl", "gr1348941"),
        example=_fake("glpat-", "FakeGitLabTokenForDocs", ".01.0w0fakedoc"),
    ),
    _rule(
        "slack_token",
        _B + r"(?:xox[abposrecd]-[A-Za-z0-9%-]{10,}|xoxe\.xox[bp]-[A-Za-z0-9-]{10,}"
        r"|xapp-\d-[A-Za-z0-9-]{10,})",
        r"xox[a-z.]|xapp-",
        ("xox", "xapp-"),
        example=_fake("xoxb-", "0000-fake-slack-token"),
    ),
    _rule(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}",
        r"hooks\.slack\.com",
        markers=("hooks.slack.com",),
        example=_fake("https://hooks.slack.com/services/", "TFAKE/BFAKE/fakeFakeFake"),
    ),
    _rule(
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}",
        r"discord(?:app)?\.com/api/webhooks",
        markers=("discord",),
        example=_fake("https://discord.com/api/webhooks/", "123/Fake-webhook-token-docs"),
    ),
    _rule(
        "stripe_key",
        _B
        + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"
        + _E
        + "|"
        + _B
        + r"whsec_[A-Za-z0-9]{20,}"
        + _E,
        r"[sr]k_(?:live|test)_|whsec_",
        ("k_live_", "k_test_", "whsec_"),
        example=_fake("sk_live_", "FakeStripeKeyForDocs"),
    ),
    _rule(
        "twilio_auth_token",
        r"(?<![A-Za-z0-9])(?:SK|AC)[0-9a-f]{32}[\"']?[ \t]*[,:][ \t]*[bu]?[\"']?"
        r"(?P<secret>[0-9a-fA-F]{32})(?![A-Za-z0-9])",
        r"(?:SK|AC)[0-9a-f]{32}",
        markers=("sk", "ac"),
        gate=r"(?:SK|AC)[0-9a-f]{32}",
        example=_fake("Client('AC", "0123456789abcdef" * 2, "', '", "fedcba9876543210" * 2, "')"),
    ),
    _rule(
        "twilio_api_key",
        r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])",
        r"SK[0-9a-fA-F]{32}",
        markers=("sk",),
        gate=r"SK[0-9a-fA-F]{32}",
        example=_fake("SK", "0123456789abcdef" * 2),
    ),
    _rule(
        "heroku_api_key",
        _B + r"HRKU-[A-Za-z0-9_-]{20,}",
        r"HRKU-",
        markers=("hrku-",),
        example=_fake("HRKU-", "Fake-heroku-key-for-docs-0123"),
    ),
    _rule(
        "digitalocean_token",
        _B + r"do[opr]_v1_[a-f0-9]{64}" + _E,
        r"do[opr]_v1_",
        markers=("_v1_",),
        example=_fake("dop_v1_", "0123456789abcdef" * 4),
    ),
    _rule(
        "databricks_token",
        _B + r"dapi[a-f0-9]{32}(?:-\d+)?" + _E,
        r"dapi[a-f0-9]{32}",
        markers=("dapi",),
        example=_fake("dapi", "0123456789abcdef" * 2),
    ),
    _rule(
        "shopify_token",
        _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E,
        r"shp(?:at|ca|pa|ss)_",
        markers=("shp",),
        example=_fake("shpat_", "0123456789abcdef" * 2),
    ),
    _rule(
        "age_secret_key",
        r"AGE-(?:SECRET-KEY|PLUGIN-[A-Z0-9]+)-1[0-9A-Z]{40,}",
        r"AGE-(?:SECRET-KEY|PLUGIN-)",
        markers=("age-",),
        example=_fake("AGE-SECRET-KEY-1", "QQQQFAKEQQQQ" * 5),
    ),
    _rule(
        "telegram_bot_token",
        r"(?:(?<=bot)|(?<![A-Za-z0-9_:]))\d{8,10}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])",
        r"[0-9]{8}:[A-Za-z0-9_-]{35}",
        check=_telegram_check,
        markers=(":",),
        gate=r"\d{8}:",
        example=_fake("123456789:", "AAFakeTelegramBotTokenForDocs_01234"),
    ),
    _rule(
        "npm_token",
        _B + r"npm_[A-Za-z0-9]{36}" + _E,
        r"npm_",
        markers=("npm_",),
        example=_fake("npm_", "FakeNpmTokenForDocs0123456789abcdefg"),
    ),
    _rule(
        "pypi_token",
        _B + r"pypi-AgE[A-Za-z0-9_-]{50,}",
        r"pypi-AgE",
        markers=("pypi-",),
        example=_fake("pypi-AgEIcHlwaS5vcmc", "Fake" * 12),
    ),
    _rule(
        "huggingface_token",
        _B + r"(?:hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,})" + _E,
        r"hf_|api_org_",
        markers=("hf_", "api_org_"),
        example=_fake("hf_", "FakeHuggingFaceTokenForDocs012345"),
    ),
    _rule(
        "sendgrid_key",
        _B + r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}" + _E,
        r"SG\.",
        markers=("sg.",),
        example=_fake(
            "SG.", "FakeSendGridKeyId0123", ".", "FakeSendGridSecretPartForDocs0123456789abcd"
        ),
    ),
    _rule(
        "docker_hub_token",
        _B + r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}",
        r"dckr_",
        markers=("dckr_",),
        example=_fake("dckr_pat_", "FakeDockerHubToken0123"),
    ),
    _rule(
        "grafana_token",
        _B + r"(?:glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}"
        r"|eyJrIjoi[A-Za-z0-9+/]{40,400}={0,2})",
        r"gl(?:sa|c)_|eyJrIjoi",
        markers=("glsa_", "glc_", "eyjrijoi"),
        example=_fake("glsa_", "FakeGrafanaServiceAccountToken01", "_0a1b2c3d"),
    ),
    _rule(
        "vault_token",
        _B + r"hv[sbr]\.[A-Za-z0-9_-]{24,}",
        r"hv[sbr]\.",
        markers=("hvs.", "hvb.", "hvr."),
        example=_fake("hvs.", "FakeVaultTokenForDocs012345"),
    ),
    _rule(
        "other_api_token",
        _B + r"(?:lin_api_[A-Za-z0-9]{30,}|gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}"
        r"|r8_[A-Za-z0-9]{30,}|pplx-[A-Za-z0-9]{30,}|sbp_[a-f0-9]{40}|NRAK-[A-Z0-9]{27}"
        r"|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|dp\.(?:st|ct|sa|scim|audit)\.[A-Za-z0-9_-]{30,}"
        r"|tskey-[a-z]+-[A-Za-z0-9]+-[A-Za-z0-9]+|ATATT3[A-Za-z0-9_=-]{50,}"
        r"|ATBB[A-Za-z0-9_=.-]{28,}|sntry[su]_[A-Za-z0-9+/=_-]{30,}|bkua_[a-f0-9]{40}"
        r"|pul-[a-f0-9]{40}|sgp_[A-Za-z0-9_]{30,}|rnd_[A-Za-z0-9]{20,}|fo1_[A-Za-z0-9_-]{30,}"
        r"|ops_eyJ[A-Za-z0-9_-]{20,}|ntn_[A-Za-z0-9]{30,}|secret_[A-Za-z0-9]{43}"
        r"|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{40,}|sk\.eyJ[A-Za-z0-9_.-]{20,}"
        r"|key-[0-9a-f]{32}|sq0(?:atp|csp)-[A-Za-z0-9_-]{20,}|EAAA[A-Za-z0-9_-]{40,}"
        r"|[0-9a-f]{32}-us[0-9]{1,2}|AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{60,}"
        r"|nfp_[A-Za-z0-9]{30,}|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{30,}"
        r"|fm[12][ar]?_[A-Za-z0-9+/=_-]{30,}|re_[A-Za-z0-9]{8}_[A-Za-z0-9]{20,}"
        r"|access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}|p8e-[A-Za-z0-9-]{30,}"
        r"|CFPAT-[A-Za-z0-9_-]{40,}|fio-u-[A-Za-z0-9_=-]{60,}|pnu_[A-Za-z0-9]{36}"
        r"|tk-us-[A-Za-z0-9_-]{40,}|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}|fw_[A-Za-z0-9]{20,}"
        r"|sk_[a-f0-9]{48}|LTAI[A-Za-z0-9]{20}|sq[uap]_[a-f0-9]{40}|rubygems_[a-f0-9]{48}"
        r"|oy2[a-z0-9]{43}|AKCp[A-Za-z0-9]{69}|cmVmdGtu[A-Za-z0-9]{56}|CLOJARS_[a-z0-9]{60}"
        r"|dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}|x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}"
        r"|API-[A-Z0-9]{26}|shippo_(?:live|test)_[a-f0-9]{40}|ico-[A-Za-z0-9]{32}"
        r"|rdme_[a-z0-9]{70}|tfp_[A-Za-z0-9_.=-]{59}|AQVN[A-Za-z0-9_-]{35,38}"
        r"|t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2}"
        r"|(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"
        r"|sha256~[A-Za-z0-9_-]{43}|sl\.(?:u\.)?[A-Za-z0-9_-]{130,}|EZ[AT]K[A-Za-z0-9]{54}"
        r"|FLWSECK(?:_TEST)?-[a-fA-F0-9]{32}-X|v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"
        r"|EAA[A-Za-z0-9]{90,}|NRII-[A-Za-z0-9_-]{32}|aio_[A-Za-z0-9]{28}"
        r"|dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}|duffel_(?:test|live)_[A-Za-z0-9_=-]{43}"
        r"|s-s4t2(?:ud|af)-[a-f0-9]{64}|(?:live|test)_[a-f0-9]{35}"
        r"|[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk|sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}"
        r"|1//0[A-Za-z0-9_-]{30,})" + _E,
        r"lin_api_|gsk_|xai-|r8_|pplx-|sbp_|NRAK-|PMAK-|dp\.|tskey-|ATATT3|ATBB|sntry|bkua_|pul-"
        r"|sgp_|rnd_|fo1_|ops_eyJ|ntn_|secret_|atlasv1|sk\.eyJ|key-[0-9a-f]|sq0|EAAA"
        r"|[0-9a-f]{32}-us[0-9]|APA91b|nfp_|pscale_|fm[12][ar]?_|re_[A-Za-z0-9]{8}_"
        r"|access_token\$|p8e-|CFPAT-|fio-u-|pnu_|tk-us-|lsv2_|fw_|sk_[a-f0-9]{48}"
        r"|LTAI[A-Za-z0-9]{20}|sq[uap]_|rubygems_|oy2[a-z0-9]{43}|AKCp|cmVmdGtu|CLOJARS_"
        r"|dt0c01\.|keysib-|smtpsib-|API-[A-Z0-9]{26}|shippo_|ico-|rdme_|tfp_|AQVN"
        r"|t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}|[ps]at\.[A-Za-z0-9_-]{22}\.|sha256~"
        r"|sl\.[A-Za-z0-9_-]{130}|EZ[AT]K|FLWSECK|v1\.0-[a-f0-9]{24}-|EAA[A-Za-z0-9]{90}"
        r"|NRII-|aio_|dnkey-|duffel_|s-s4t2"
        r"|(?:live|test)_[a-f0-9]{35}|_mmk|sm_[ps]at_|sm_aat_|1//0",
        markers=(
            "lin_api_",
            "gsk_",
            "xai-",
            "r8_",
            "pplx-",
            "sbp_",
            "nrak-",
            "pmak-",
            "dp.",
            "tskey-",
            "atatt3",
            "atbb",
            "sntry",
            "bkua_",
            "pul-",
            "sgp_",
            "rnd_",
            "fo1_",
            "ops_eyj",
            "ntn_",
            "secret_",
            "atlasv1",
            "sk.eyj",
            "key-",
            "sq0",
            "eaaa",
            "-us",
            "apa91b",
            "nfp_",
            "pscale_",
            "fm1",
            "fm2",
            "re_",
            "access_token$",
            "p8e-",
            "cfpat-",
            "fio-u-",
            "pnu_",
            "tk-us-",
            "lsv2_",
            "fw_",
            "sk_",
            "ltai",
            "squ_",
            "sqp_",
            "sqa_",
            "rubygems_",
            "oy2",
            "akcp",
            "cmvmdgtu",
            "clojars_",
            "dt0c01.",
            "sib-",
            "api-",
            "shippo_",
            "ico-",
            "rdme_",
            "tfp_",
            "aqvn",
            "t1.",
            "pat.",
            "sat.",
            "sha256~",
            "sl.",
            "ezak",
            "eztk",
            "flwseck",
            "v1.0-",
            "eaa",
            "nrii-",
            "aio_",
            "dnkey-",
            "duffel_",
            "s-s4t2",
            "live_",
            "test_",
            "_mmk",
            "sm_",
            "1//0",
        ),
        check=_generated,
        example=_fake("lin_api_", "FakeLinearApiKeyForDocs0123456789abcdefgh"),
    ),
    _rule(
        "shaped_api_token",
        _B + r"(?:[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}"
        r"|(?:api|sdk)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}"
        r"|pat[A-Za-z0-9]{14}\.[a-f0-9]{64})" + _E,
        r"[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}|(?:api|sdk)-[a-f0-9]{8}-[a-f0-9]{4}-"
        r"|pat[A-Za-z0-9]{14}\.[a-f0-9]{64}",
        gate=r"[a-f0-9]{8}-[a-f0-9]{4}-|[a-f0-9]{32}-[a-f0-9]{8}-|\.[a-f0-9]{64}",
        example=_fake("key-like ", "0123456789abcdef" * 2, "-0a1b2c3d-4e5f6a7b"),
    ),
    _rule(
        "seed_phrase",
        # A wallet's recovery phrase (BIP-39): 12 to 24 words of its 2,048-word list, in a
        # row on one line, any case; the check wants the phrase's checksum or a context word
        # (the list is data beside this).
        r"(?<![\w-])(?P<secret>(?:[A-Za-z]{3,8}[ \t]+){11,47}[A-Za-z]{3,8})(?![\w-])",
        r"(?:[A-Za-z]{3,8}[ \t]+){11}[A-Za-z]{3,8}",
        gate=r"(?:[A-Za-z]{3,8}[ \t]+){11}[A-Za-z]{3,8}",
        check=_seed_phrase_check,
        example=_fake(
            "mnemonic: ",
            "legal winner thank year wave sausage worth useful legal winner thank yellow",
        ),
    ),
)
"""This family's rules, in the order they are applied."""
