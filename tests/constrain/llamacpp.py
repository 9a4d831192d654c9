"""llama.cpp as the judge of our GBNF: its own grammar parser and sampler, through
llama-cpp-python's low-level API, and a tiny random-weights model it can load.

``tiny_model(path)`` writes a GGUF llama model (two layers, 64-wide, random weights from a fixed
seed) whose vocabulary is GPT-2's byte-level one: 256 byte tokens, a few merges, BOS and EOS. Every
UTF-8 string tokenizes and detokenizes exactly, so a grammar check sees the text as written.

``Checker(model_path).accepts(grammar, text)`` asks llama.cpp's grammar sampler, token by token,
whether it allows the text's next token (it sets that token's logit to -inf where not), accepts
it, and at the end whether it allows EOS: the text is a whole sentence of the grammar.
``parses(grammar)`` is whether llama.cpp's parser takes the grammar at all (it returns NULL
where not).

Everything that needs llama_cpp is imported lazily: the tests skip, saying why, without it.
"""

from __future__ import annotations

import ctypes
import math
import re
from pathlib import Path
from typing import Any

N_EMBD = 64
N_HEAD = 4
N_LAYER = 2
N_FF = 128
N_CTX = 2048
SEED = 1234
# Merges make a few tokens of more than one byte, so that the grammar also sees tokens that span
# its symbols: <tool_call> is 7 tokens (< to ol _ ca ll >), '": ' starts with one, 12 is one.
MERGES = ("t o", "o l", "c a", "l l", "\" :", "Ġ Ġ", "a r", "n a", "Ġ t", "1 2")


def byte_alphabet() -> list[str]:
    """GPT-2's printable stand-ins for the 256 bytes, in byte order."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
            *range(ord("®"), ord("ÿ") + 1)]
    stand_in = {b: chr(b) for b in kept}
    extra = 0
    for b in range(256):
        if b not in stand_in:
            stand_in[b] = chr(256 + extra)
            extra += 1
    return [stand_in[b] for b in range(256)]


def tiny_model(path: Path) -> Path:
    """Write the tiny model to ``path`` and return it."""
    import gguf
    import numpy as np

    tokens = [*byte_alphabet(), *(m.replace(" ", "") for m in MERGES), "<|bos|>", "<|eos|>"]
    types = [gguf.TokenType.NORMAL] * (len(tokens) - 2) + [gguf.TokenType.CONTROL] * 2
    n_vocab = len(tokens)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("toolbridge-tiny")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(list(MERGES))
    writer.add_bos_token_id(n_vocab - 2)
    writer.add_eos_token_id(n_vocab - 1)
    writer.add_add_bos_token(True)
    rng = np.random.default_rng(SEED)

    def weight(*shape: int, scale: float = 0.02) -> Any:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    writer.add_tensor("token_embd.weight", weight(n_vocab, N_EMBD, scale=1.0))
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    writer.add_tensor("output.weight", weight(n_vocab, N_EMBD, scale=0.05))
    for i in range(N_LAYER):
        for name, shape in (("attn_q", (N_EMBD, N_EMBD)), ("attn_k", (N_EMBD, N_EMBD)),
                            ("attn_v", (N_EMBD, N_EMBD)), ("attn_output", (N_EMBD, N_EMBD)),
                            ("ffn_gate", (N_FF, N_EMBD)), ("ffn_up", (N_FF, N_EMBD)),
                            ("ffn_down", (N_EMBD, N_FF))):
            writer.add_tensor(f"blk.{i}.{name}.weight", weight(*shape))
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


class Checker:
    """llama.cpp's grammar parser and sampler over the tiny model's vocabulary."""

    def __init__(self, model_path: Path) -> None:
        import llama_cpp

        self.lib = llama_cpp
        # llama.cpp logs what a lazy grammar has read so far, cut at token bounds, and
        # llama-cpp-python's logger decodes it as strict UTF-8, which raises inside the ctypes
        # callback: the checker's llama.cpp is silent.
        self.quiet = llama_cpp.llama_log_callback(lambda level, text, data: None)
        llama_cpp.llama_log_set(self.quiet, ctypes.c_void_p(0))
        llama_cpp.llama_backend_init()
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self.model = llama_cpp.llama_model_load_from_file(str(model_path).encode(), params)
        if not self.model:
            raise RuntimeError(f"llama.cpp could not load {model_path}")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.eos = llama_cpp.llama_vocab_eos(self.vocab)

    def close(self) -> None:
        self.lib.llama_model_free(self.model)
        from llama_cpp import _logger

        self.lib.llama_log_set(_logger.llama_log_callback, ctypes.c_void_p(0))

    def tokens(self, text: str) -> list[int]:
        """``text``'s tokens (no BOS, special tokens not recognised: text is text)."""
        data = text.encode()
        room = len(data) + 8
        out = (self.lib.llama_token * room)()
        n = self.lib.llama_tokenize(self.vocab, data, len(data), out, room, False, False)
        if n < 0:
            raise RuntimeError(f"llama_tokenize needs {-n} tokens")
        return list(out[:n])

    def detokenize(self, tokens: list[int]) -> str:
        room = 8 * len(tokens) + 16
        buf = ctypes.create_string_buffer(room)
        arr = (self.lib.llama_token * len(tokens))(*tokens)
        n = self.lib.llama_detokenize(self.vocab, arr, len(tokens), buf, room, False, False)
        if n < 0:
            raise RuntimeError("llama_detokenize: buffer too small")
        return buf.raw[:n].decode()

    def sampler(self, grammar: str, triggers: tuple[str, ...] = ()) -> Any:
        """llama.cpp's grammar sampler for ``grammar`` (None where its parser rejects it); with
        ``triggers``, lazy: unconstrained until one occurs, then constrained from its start."""
        if not triggers:
            smpl = self.lib.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
            return smpl or None
        patterns = (ctypes.c_char_p * len(triggers))(*(trigger_pattern(t).encode()
                                                        for t in triggers))
        no_tokens = (self.lib.llama_token * 0)()
        smpl = self.lib.llama_sampler_init_grammar_lazy_patterns(
            self.vocab, grammar.encode(), b"root", patterns, len(triggers), no_tokens, 0)
        return smpl or None

    def parses(self, grammar: str) -> bool:
        smpl = self.sampler(grammar)
        if smpl is None:
            return False
        self.lib.llama_sampler_free(smpl)
        return True

    def allows(self, smpl: Any, token: int) -> bool:
        """Whether the grammar sampler, in its state, lets ``token`` through."""
        data = (self.lib.llama_token_data * 1)(self.lib.llama_token_data(token, 0.0, 0.0))
        array = self.lib.llama_token_data_array(data, 1, -1, False)
        self.lib.llama_sampler_apply(smpl, ctypes.byref(array))
        return not math.isinf(data[0].logit)

    def accepts(self, grammar: str, text: str, triggers: tuple[str, ...] = ()) -> bool:
        """Whether ``text`` is a whole sentence of ``grammar``, by llama.cpp's sampler; with
        ``triggers``, as llama.cpp's lazy grammar sees it (free text until a trigger).

        A lazy grammar must accept the text that completes a trigger (within its token):
        llama.cpp throws there, which ends the process. Raises ValueError where llama.cpp's
        parser rejects the grammar."""
        smpl = self.sampler(grammar, triggers)
        if smpl is None:
            raise ValueError("llama.cpp's grammar parser rejected the grammar")
        try:
            for token in self.tokens(text):
                if not self.allows(smpl, token):
                    return False
                self.lib.llama_sampler_accept(smpl, token)
            return self.allows(smpl, self.eos)
        finally:
            self.lib.llama_sampler_free(smpl)


def trigger_pattern(word: str) -> str:
    """A trigger word as the pattern llama.cpp's server makes of it: the text up to the word,
    which is captured (the grammar applies from the capture on), and anything after it."""
    escaped = re.sub(r"([.^$|()*+?\[\]{}\\])", r"\\\1", word)
    return f"[\\s\\S]*?({escaped})[\\s\\S]*"
