"""Model shapes for the LLM planner: a Hugging Face ``config.json`` read into :class:`ModelConfig`, and the bundled
presets (``roofcore/llm/presets/*.json``, each the fields of the model's published ``config.json`` with its URL).

Fields read (first key found wins): hidden ``hidden_size``/``n_embd``/``d_model``; heads
``num_attention_heads``/``n_head``; KV heads ``num_key_value_heads`` (default: the heads); head size ``head_dim``
(default hidden/heads); FFN ``intermediate_size``/``n_inner`` (GPT-J's ``null``: 4·hidden); layers
``num_hidden_layers``/``n_layer``; ``vocab_size``; a gated (SwiGLU) FFN unless ``hidden_act``/``activation_function``
is a GELU/ReLU without gating (GPT-2/GPT-J); ``tie_word_embeddings``.
MoE: experts ``num_local_experts``/``n_routed_experts``/``num_experts``, top-k ``num_experts_per_tok``, expert FFN
``moe_intermediate_size`` (default the FFN), ``n_shared_experts``, dense first layers ``first_k_dense_replace``.
MLA (DeepSeek-V2): ``kv_lora_rank``, ``q_lora_rank``, ``qk_rope_head_dim``, ``qk_nope_head_dim``, ``v_head_dim``.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import InputError

PRESET_DIR = Path(__file__).with_name("presets")


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer's shape (see the module docstring for where each field comes from)."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    gated_ffn: bool = True
    tied_embeddings: bool = False
    experts: int = 0  #: routed experts per MoE layer (0: dense)
    experts_per_tok: int = 0
    moe_ffn: int = 0  #: one expert's FFN width
    shared_experts: int = 0
    dense_layers: int = 0  #: leading layers with a dense FFN in an MoE model
    kv_lora_rank: int = 0  #: MLA: the compressed KV width (0: ordinary attention)
    q_lora_rank: int = 0
    rope_head_dim: int = 0
    nope_head_dim: int = 0
    v_head_dim: int = 0
    source: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.moe else 0

    # ------------------------------------------------------------------ parameter counts (weights, not bytes)
    def attn_params(self) -> int:
        """Attention weights of one layer."""
        h, H = self.hidden, self.heads
        if self.mla:
            qk = self.nope_head_dim + self.rope_head_dim
            q = (h * self.q_lora_rank + self.q_lora_rank * H * qk) if self.q_lora_rank else h * H * qk
            kv = h * (self.kv_lora_rank + self.rope_head_dim) + self.kv_lora_rank * H * (self.nope_head_dim + self.v_head_dim)
            return q + kv + H * self.v_head_dim * h
        return h * (H + 2 * self.kv_heads) * self.head_dim + H * self.head_dim * h

    def ffn_params(self, width: int) -> int:
        return (3 if self.gated_ffn else 2) * self.hidden * width

    def params(self) -> dict[str, int]:
        """Weights by part: ``attention``, ``dense_ffn``, ``experts`` (all routed), ``shared``, ``router``,
        ``embedding``, ``lm_head`` (0 when tied), ``norms``; and ``total``, ``active`` (per token: top-k experts)."""
        L, h = self.layers, self.hidden
        dense_l = self.dense_layers if self.moe else L
        out = {
            "attention": L * self.attn_params(),
            "dense_ffn": dense_l * self.ffn_params(self.ffn),
            "experts": self.moe_layers * self.experts * self.ffn_params(self.moe_ffn),
            "shared": self.moe_layers * self.shared_experts * self.ffn_params(self.moe_ffn),
            "router": self.moe_layers * h * self.experts,
            "embedding": self.vocab * h,
            "lm_head": 0 if self.tied_embeddings else self.vocab * h,
            "norms": (2 * L + 1) * h,
        }
        total = sum(out.values())
        active = total - out["experts"] + self.moe_layers * self.experts_per_tok * self.ffn_params(self.moe_ffn)
        out["total"], out["active"] = total, active
        return out

    def kv_width(self) -> int:
        """Cache elements per token per layer: ``2·kv_heads·head_dim``; MLA: ``kv_lora_rank + rope_head_dim``."""
        return self.kv_lora_rank + self.rope_head_dim if self.mla else 2 * self.kv_heads * self.head_dim


def _first(cfg: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        if cfg.get(k) is not None:
            return cfg[k]
    return default


def _int(cfg: dict[str, Any], where: str, *keys: str, default: Any = None, minimum: int = 1) -> int:
    v = _first(cfg, *keys, default=default)
    if isinstance(v, bool) or not isinstance(v, int | float) or v != int(v) or v < minimum:
        raise InputError(where=f"{where}: {keys[0]}", expected=f"a whole number ≥ {minimum}", found=repr(v),
                         hint="a Hugging Face config.json of a decoder-only model names it.")
    return int(v)


_UNGATED = ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu", "quick_gelu")


def from_hf(cfg: Any, *, name: str = "model", source: str = "") -> ModelConfig:
    """A :class:`ModelConfig` from a parsed Hugging Face ``config.json`` (see the module docstring)."""
    where = name
    if not isinstance(cfg, dict):
        raise InputError(where=where, expected="a JSON object (a Hugging Face config.json)", found=type(cfg).__name__)
    cfg = dict(cfg.get("text_config") or {}, **{k: v for k, v in cfg.items() if k != "text_config"})
    hidden = _int(cfg, where, "hidden_size", "n_embd", "d_model")
    heads = _int(cfg, where, "num_attention_heads", "n_head", "num_heads")
    kvh = _int(cfg, where, "num_key_value_heads", "num_kv_heads", default=heads)
    if heads % kvh:
        raise InputError(where=f"{where}: num_key_value_heads", expected=f"a divisor of the heads ({heads})", found=str(kvh))
    head_dim = _int(cfg, where, "head_dim", default=hidden // heads)
    ffn = _int(cfg, where, "intermediate_size", "n_inner", "ffn_dim", default=4 * hidden)
    act = str(_first(cfg, "hidden_act", "activation_function", default="silu")).lower()
    model_type = str(cfg.get("model_type", "")).lower()
    gated = not (act in _UNGATED or model_type in ("gptj", "gpt2", "gpt_neox", "opt"))
    experts = _int(cfg, where, "num_local_experts", "n_routed_experts", "num_experts", default=0, minimum=0)
    topk = _int(cfg, where, "num_experts_per_tok", "moe_topk", default=2 if experts else 0, minimum=0)
    if experts and not 1 <= topk <= experts:
        raise InputError(where=f"{where}: num_experts_per_tok", expected=f"1 to {experts}", found=str(topk))
    if cfg.get("is_encoder_decoder"):
        raise InputError(where=where, expected="a decoder-only model", found="an encoder-decoder config",
                         hint="the planner costs decoder-only transformers (Llama, GPT, Mistral, Qwen, DeepSeek).")
    mla = _int(cfg, where, "kv_lora_rank", default=0, minimum=0)
    notes = []
    window = cfg.get("sliding_window")
    if isinstance(window, int) and window > 0 and cfg.get("use_sliding_window", True) is not False:
        notes.append(f"sliding-window attention (window {window}): costed as full attention over the whole context, "
                     f"an upper bound for contexts beyond {window} tokens")
    if mla:
        notes.append("MLA: the cache holds the compressed latent (kv_lora_rank + qk_rope_head_dim per token and "
                     "layer); attention runs in the latent space with the up-projections absorbed, in prefill as in "
                     "decode (a prefill that decompresses K and V does fewer FLOPs per pair: prefill attention here "
                     "is an upper bound).")
    return ModelConfig(
        name=name, layers=_int(cfg, where, "num_hidden_layers", "n_layer", "num_layers"), hidden=hidden, heads=heads,
        kv_heads=kvh, head_dim=head_dim, ffn=ffn, vocab=_int(cfg, where, "vocab_size", "padded_vocab_size"),
        gated_ffn=gated, tied_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        experts=experts, experts_per_tok=topk if experts else 0,
        moe_ffn=_int(cfg, where, "moe_intermediate_size", default=ffn) if experts else 0,
        shared_experts=_int(cfg, where, "n_shared_experts", default=0, minimum=0) if experts else 0,
        dense_layers=_int(cfg, where, "first_k_dense_replace", default=0, minimum=0) if experts else 0,
        kv_lora_rank=mla, q_lora_rank=_int(cfg, where, "q_lora_rank", default=0, minimum=0) if mla else 0,
        rope_head_dim=_int(cfg, where, "qk_rope_head_dim", default=0, minimum=0) if mla else 0,
        nope_head_dim=_int(cfg, where, "qk_nope_head_dim", default=head_dim, minimum=0) if mla else 0,
        v_head_dim=_int(cfg, where, "v_head_dim", default=head_dim, minimum=0) if mla else 0,
        source=source or str(cfg.get("_source", "")), notes=tuple(notes))


def presets() -> list[str]:
    """The bundled preset names, sorted."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.json"))


def preset_source(name: str) -> str:
    source: str = json.loads((PRESET_DIR / f"{name}.json").read_text(encoding="utf-8")).get("_source", "")
    return source


def load_model(spec: str | Path | dict[str, Any], *, name: str | None = None) -> ModelConfig:
    """A preset name (``llama-2-7b``), a path to a ``config.json``, or a parsed config mapping."""
    if isinstance(spec, dict):
        return from_hf(spec, name=name or str(spec.get("_name", "model")))
    text = str(spec).strip()
    key = text.lower()
    if (PRESET_DIR / f"{key}.json").is_file():
        doc = json.loads((PRESET_DIR / f"{key}.json").read_text(encoding="utf-8"))
        return from_hf(doc, name=key, source=doc.get("_source", ""))
    path = Path(text)
    if path.is_file():
        try:
            doc = json.loads(path.read_bytes())
        except (ValueError, UnicodeDecodeError) as e:
            raise InputError(where=path.name, expected="a JSON config.json", found=f"unreadable JSON ({e})") from None
        return from_hf(doc, name=name or (path.parent.name if path.name == "config.json" else path.stem),
                       source=str(path.name))
    close = difflib.get_close_matches(key, presets(), n=1)
    raise InputError(where="model", expected="a preset (" + ", ".join(presets()) + ") or a config.json path",
                     found=repr(text), hint=f"did you mean {close[0]!r}?" if close else None)


def with_name(cfg: ModelConfig, name: str) -> ModelConfig:
    return replace(cfg, name=name)
