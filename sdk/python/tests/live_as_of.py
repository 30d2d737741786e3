"""Issue 43: the Python SDK checks a balance as of a moment with core's
verifier (``bvs_sdk.verify_as_of``), and fails a tampered one. Run by
tests/tests/as_of.rs with BVS_LOG_KEY, BVS_AS_OF_FILE and
BVS_AS_OF_TAMPERED set."""

import os

import bvs_sdk

key = os.environ["BVS_LOG_KEY"]
with open(os.environ["BVS_AS_OF_FILE"], encoding="utf-8") as f:
    good = bvs_sdk.verify_as_of(f.read(), key=key)
assert good["ok"], [c for c in good["checks"] if not c["ok"]]
with open(os.environ["BVS_AS_OF_TAMPERED"], encoding="utf-8") as f:
    bad = bvs_sdk.verify_as_of(f.read(), key=key)
assert not bad["ok"], "a tampered as-of answer passed"
print("sdk ok", len(good["checks"]), "checks")
