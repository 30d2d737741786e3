"""The service's own verifier, run in Python without re-implementing it.

The same Rust ``core`` the service, the verify page and ``bvs-verify`` run,
compiled to WebAssembly (verifier-wasm, the SDKs' build with a receipt's
agreement checks: ``scripts/build-verifier.sh --sdk``; the TypeScript SDK
runs the very same module) and executed here with ``wasmtime``. No Rust
toolchain is needed to install the SDK, and CI builds the module once for
both SDKs (sdk/README.md says why this rather than PyO3).

The module's exports follow wasm-bindgen's ABI: a string or byte argument
is copied into the module's memory (``__wbindgen_malloc``) and passed as
(pointer, length); a returned string comes back as (pointer, length) and is
freed with ``__wbindgen_free``.
"""

from __future__ import annotations

import json
import threading
from importlib import resources
from typing import Any

import wasmtime

_IMPORTS_MODULE = "./bvs_verifier_wasm_bg.js"


class _Verifier:
    def __init__(self, wasm: bytes) -> None:
        engine = wasmtime.Engine()
        self._store = wasmtime.Store(engine)
        module = wasmtime.Module(engine, wasm)
        linker = wasmtime.Linker(engine)
        # wasm-bindgen's start-up hook fills an externref table that none of
        # the exports used here reads.
        linker.define_func(
            _IMPORTS_MODULE,
            "__wbindgen_init_externref_table",
            wasmtime.FuncType([], []),
            lambda: None,
        )
        instance = linker.instantiate(self._store, module)
        self._exports = instance.exports(self._store)
        self._memory: wasmtime.Memory = self._exports["memory"]  # type: ignore[assignment]
        start = self._exports.get("__wbindgen_start")
        if start is not None:
            start(self._store)  # type: ignore[operator]
        self._lock = threading.Lock()

    def _pass(self, data: bytes) -> tuple[int, int]:
        malloc = self._exports["__wbindgen_malloc"]
        ptr = malloc(self._store, len(data), 1)  # type: ignore[operator]
        self._memory.write(self._store, data, ptr)
        return ptr, len(data)

    def _take_string(self, result: Any) -> str:
        ptr, length = result
        try:
            return bytes(self._memory.read(self._store, ptr, ptr + length)).decode("utf-8")
        finally:
            self._exports["__wbindgen_free"](self._store, ptr, length, 1)  # type: ignore[operator]

    def verify_receipt(self, receipt_text: str, key: str | None) -> dict[str, Any]:
        with self._lock:
            r_ptr, r_len = self._pass(receipt_text.encode("utf-8"))
            if key is None:
                k_ptr, k_len = 0, 0
            else:
                k_ptr, k_len = self._pass(key.encode("utf-8"))
            fn = self._exports["verifyReceiptWithAgreement"]
            out = self._take_string(fn(self._store, r_ptr, r_len, k_ptr, k_len))  # type: ignore[operator]
        report: dict[str, Any] = json.loads(out)
        return report

    def _pass_opt(self, text: str | None) -> tuple[int, int]:
        """An optional string argument: (0, 0) is wasm-bindgen's ``None``."""
        return (0, 0) if text is None else self._pass(text.encode("utf-8"))

    def _report(self, name: str, *texts: str | None) -> dict[str, Any]:
        """Calls export ``name`` with (pointer, length) per string argument
        (``None`` for an absent optional one) and reads its JSON report."""
        with self._lock:
            args: list[int] = []
            for i, text in enumerate(texts):
                if i == 0:
                    args.extend(self._pass((text or "").encode("utf-8")))
                else:
                    args.extend(self._pass_opt(text))
            fn = self._exports[name]
            out = self._take_string(fn(self._store, *args))  # type: ignore[operator]
        report: dict[str, Any] = json.loads(out)
        return report

    def verify_as_of(self, answer_text: str, key: str | None) -> dict[str, Any]:
        """A balance as of a moment (derive's answer with ``asOf``)."""
        return self._report("verifyAsOf", answer_text, key)

    def verify_receipt_liabilities(self, receipt_text: str, proof_text: str | None, key: str | None) -> dict[str, Any]:
        """The receipt's liabilities proof (or ``proof_text``) tied to it."""
        return self._report("verifyReceiptLiabilities", receipt_text, proof_text, key)

    def verify_witness_policy(self, document_text: str, key: str | None, policy_text: str) -> dict[str, Any]:
        """A saved document's signed tree head held to a witness policy."""
        return self._report("verifyWitnessPolicy", document_text, key, policy_text)

    def verify_liabilities(
        self, proof_text: str, customer_id: str, key: str | None, balance: str | None
    ) -> dict[str, Any]:
        """A customer's liabilities proof (docs/liabilities.md §4), checked by that customer."""
        return self._report("verifyLiabilities", proof_text, customer_id, key, balance)

    def verify_liabilities_of_ledger(
        self, proof_text: str, ledger_id: str, key: str | None, balance: str | None
    ) -> dict[str, Any]:
        """As ``verify_liabilities``, by the checking customer's ledger id."""
        return self._report("verifyLiabilitiesOfLedger", proof_text, ledger_id, key, balance)

    def verify_ed25519(self, public_key: bytes, message: bytes, signature: bytes) -> bool:
        with self._lock:
            args: list[int] = []
            for part in (public_key, message, signature):
                args.extend(self._pass(part))
            fn = self._exports["verifyEd25519"]
            return bool(fn(self._store, *args))  # type: ignore[operator]

    def version(self) -> str:
        with self._lock:
            return self._take_string(self._exports["version"](self._store))  # type: ignore[operator]


_instance: _Verifier | None = None
_instance_lock = threading.Lock()


def verifier() -> _Verifier:
    """The verifier, loaded once per process."""
    global _instance
    with _instance_lock:
        if _instance is None:
            path = resources.files("bvs_sdk").joinpath("verifier.wasm")
            if not path.is_file():
                raise RuntimeError(
                    "the receipt verifier (bvs_sdk/verifier.wasm) is missing: run "
                    "scripts/build-sdks.sh in the repository, then pip install ./sdk/python again"
                )
            _instance = _Verifier(path.read_bytes())
        return _instance
