"""The sampler: llama.cpp's sampler chain, with a grammar checked on the chosen token only."""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

from moot.errors import MootError
from moot.inference.decoding import OPENS_MORE, DecodePlan
from moot.inference.llama.context import Runtime, token_array, token_data

PENALTY_LAST_N = 256
PRIME_TOKENS = 2048
DRY_BREAKERS = (b"\n", b":", b'"', b"*")
# Penalties and DRY only ever lower logits, so applying them to the 128 likeliest tokens
# rather than the whole vocabulary changes nothing unless more than 88 of those 128 are
# pushed below the 128th (TOP_K = 40 are kept afterwards). It saves two hash lookups per
# vocabulary entry per token: ~1.4 ms a token on Gemma-3's 262k vocabulary.
PENALISED_TOP_K = 128
REDRAW_TOP_K = 512


class Sampler:
    """A sampler chain plus, for structured replies, a grammar checked on the chosen token only.

    Sampling without the grammar and redrawing from the grammar-masked distribution only
    when the draw is rejected gives exactly the masked distribution, at a fraction of the
    cost of masking the whole vocabulary at every token (llama.cpp's own sampler does this).
    The redraw itself avoids masking the whole vocabulary too (see `_redraw`). One draw is
    not redrawn: where a free-text grammar with a closer (a question's mark) refuses a draw
    that opens another word or sentence and may end here, it ends with the closer (see
    `_refused`).
    """

    def __init__(self, rt: Runtime, plan: DecodePlan, *, context: Sequence[int] = ()) -> None:
        lc = rt.lc
        self.rt, self.lc = rt, lc
        self.chain = lc.llama_sampler_chain_init(lc.llama_sampler_chain_default_params())
        # Samplers that learn from the tokens accepted (repeat penalty, DRY).
        self.learns = plan.penalises or plan.dry_in_json
        if self.learns:
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_top_k(PENALISED_TOP_K))
        if plan.penalises:
            self._add_penalties(plan, context)
        elif plan.dry_in_json:
            self._add_dry(plan.dry)
        if plan.temperature <= 0:
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_greedy())
        else:
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_top_k(plan.top_k))
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_top_p(plan.top_p, 1))
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_temp(plan.temperature))
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_dist(plan.seed))
        # How many tokens the chain's first stage keeps: a redraw needs that many valid.
        self.needed = PENALISED_TOP_K if self.learns else 1 if plan.temperature <= 0 else plan.top_k
        self.wide = lc.llama_sampler_init_top_k(REDRAW_TOP_K) if plan.grammar else None
        self.grammar = None
        if plan.grammar is not None:
            self.grammar = lc.llama_sampler_init_grammar(
                rt.vocab, plan.grammar.encode("utf-8"), b"root"
            )
            if not self.grammar:
                self.free()
                raise MootError(key="inference.llama.sampler.llama_cpp_rejected_grammar_built")
        self.fallbacks = 0
        self.closes = 0  # refused draws that ended the reply with the closer
        self.closer = self._one_token(plan.closer) if self.grammar and plan.closer else None

    def _one_token(self, text: str) -> int | None:
        """TEXT's token, where the vocabulary spells it in one (a question's mark)."""
        tokens = self.rt.tokenize(text)
        return tokens[0] if len(tokens) == 1 else None

    def _add_penalties(self, plan: DecodePlan, context: Sequence[int]) -> None:
        lc, chain = self.lc, self.chain
        if plan.repeat_penalty > 1.0:
            sampler = lc.llama_sampler_init_penalties(
                self.rt.n_vocab, PENALTY_LAST_N, plan.repeat_penalty, 0.0, 0.0
            )
            lc.llama_sampler_chain_add(chain, sampler)
        if plan.dry > 0.0:
            self._add_dry(plan.dry)
        # The penalties see the prompt too: a small model otherwise copies the speech it
        # was just shown word for word.
        for token in list(context)[-PRIME_TOKENS:]:
            lc.llama_sampler_accept(chain, int(token))

    def _add_dry(self, multiplier: float) -> None:
        lc = self.lc
        breakers = (ctypes.c_char_p * len(DRY_BREAKERS))(*DRY_BREAKERS)
        sampler = lc.llama_sampler_init_dry(
            self.rt.vocab, multiplier, 1.75, 2, PRIME_TOKENS, breakers, len(DRY_BREAKERS)
        )
        lc.llama_sampler_chain_add(self.chain, sampler)

    def sample(self) -> int:
        lc, rt = self.lc, self.rt
        if self.grammar is None:  # llama_sampler_sample also accepts the token into the chain
            return int(lc.llama_sampler_sample(self.chain, rt.ctx, rt.idx))
        if not self.learns:  # accepting a draw the grammar rejects then does no harm
            token = int(lc.llama_sampler_sample(self.chain, rt.ctx, rt.idx))
            return token if self._allows([token])[0] else self._refused(token)
        # The chain must learn the token finally chosen, not a draw the grammar rejected.
        cur = rt.candidates()
        lc.llama_sampler_apply(self.chain, ctypes.byref(cur))
        token = int(cur.data[cur.selected].id)
        if not self._allows([token])[0]:
            token = self._refused(token)
        lc.llama_sampler_accept(self.chain, token)
        return token

    def _refused(self, token: int) -> int:
        """The token taken for a draw the grammar refused: the closer where the draw would
        open another word or sentence and the grammar may end here, else a redraw."""
        if self.closer is not None and self._allows([self.closer])[0]:
            opens = OPENS_MORE.match(self.rt.piece(token).decode("utf-8", "ignore"))
            if opens:
                self.closes += 1
                return self.closer
        return self._redraw()

    def _redraw(self) -> int:
        """Draw from the grammar-masked distribution without masking the whole vocabulary.

        The chain first keeps the `needed` best tokens. If that many of the REDRAW_TOP_K
        likeliest tokens pass the grammar, they are exactly the ones it would keep from the
        masked vocabulary (usual inside a string). Otherwise few tokens pass (between
        fields): the PrefixIndex finds every one of them. Both give the same draw as
        masking everything, which remains the way out when neither applies.
        """
        import numpy as np

        lc, rt = self.lc, self.rt
        self.fallbacks += 1
        cur = rt.candidates()
        lc.llama_sampler_apply(self.wide, ctypes.byref(cur))  # sorted, REDRAW_TOP_K long
        lc.llama_sampler_apply(self.grammar, ctypes.byref(cur))
        cur.sorted = False  # the grammar leaves the order flag set, rejected tokens in place
        kept = np.ctypeslib.as_array(cur.data, shape=(cur.size,))
        if np.count_nonzero(kept["logit"] != -np.inf) < self.needed:
            cur = rt.candidates(rt.prefix_index().narrow(self._allows_after, limit=rt.n_vocab // 4))
            lc.llama_sampler_apply(self.grammar, ctypes.byref(cur))
        lc.llama_sampler_apply(self.chain, ctypes.byref(cur))
        return int(cur.data[cur.selected].id)

    def learn(self, token: int) -> None:
        """A token fed into the sequence without being drawn: the penalties see it too."""
        if self.chain:
            self.lc.llama_sampler_accept(self.chain, token)

    def accept(self, token: int) -> bool:
        """Advance the grammar past `token`; True once it is complete (it would allow the end)."""
        if self.grammar is None:
            return False
        self.lc.llama_sampler_accept(self.grammar, token)
        return self._allows([self.rt.eog])[0]

    def _allows(self, tokens: Sequence[int], grammar: Any = None) -> list[bool]:
        """Whether the grammar, in its present state, allows each of `tokens`."""
        import numpy as np

        data = np.zeros(len(tokens), dtype=token_data())
        data["id"] = tokens
        array = token_array(self.lc, data)
        self.lc.llama_sampler_apply(grammar or self.grammar, ctypes.byref(array))
        return [bool(ok) for ok in data["logit"] != -np.inf]

    def _allows_after(self, after: Sequence[int], tokens: Sequence[int]) -> list[bool]:
        """Whether the grammar allows each of `tokens` once it has read `after` (which it
        must allow: llama.cpp aborts on a token that leaves no way to go on)."""
        if not after:
            return self._allows(tokens)
        lc = self.lc
        clone = lc.llama_sampler_clone(self.grammar)
        try:
            for token in after:
                lc.llama_sampler_accept(clone, token)
            return self._allows(tokens, clone)
        finally:
            lc.llama_sampler_free(clone)

    def free(self) -> None:
        if self.chain:
            self.lc.llama_sampler_free(self.chain)
            self.chain = None
        if self.grammar:
            self.lc.llama_sampler_free(self.grammar)
            self.grammar = None
        if self.wide:
            self.lc.llama_sampler_free(self.wide)
            self.wide = None
