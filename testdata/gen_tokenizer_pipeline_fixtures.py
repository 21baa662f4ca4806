"""Reference ids for tokenizer.json pre-tokenizer pipelines, normalizers and
ignore_merges (package tokenizer), on the tiny GPT-2 vocabulary that
gen_tokenizer_fixtures.py makes.

Run with a python3 that has the regex module (python3-regex, or pip's
regex), after gen_tokenizer_fixtures.py:
    python3 testdata/gen_tokenizer_pipeline_fixtures.py
Writes tokenizer/testdata/pipeline.json: variants, each the fields to put
into gpt2-tiny-json/tokenizer.json (normalizer, pre_tokenizer,
model.ignore_merges, tokens added to model.vocab) and the ids of hard
strings, with and without <|endoftext|> recognised (ids_special null:
the same as ids).

The algorithm is the tokenizers library's (normalizers.rs, the
pre-tokenizers' split with SplitDelimiterBehavior, bpe/model.rs) written
in Python: the normalizer; each pre-tokenizer splits every piece the one
before made (Split: the pattern's matches and the gaps between them,
combined by the behavior, empty pieces dropped; Digits: each Unicode
number isolated, or runs of them; ByteLevel: a space before a piece that
does not start with one if add_prefix_space, then GPT-2's pattern if
use_regex); then each piece's byte-level BPE, or the piece's own token
with ignore_merges when the vocabulary has it. Added tokens are split off
before all that, and the text between them is encoded part by part.
"""
import base64
import json
import os
import sys
import unicodedata

import regex

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_tokenizer_fixtures import EOT, HARD, INVALID, PAT, bpe, to_alphabet  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TD = os.path.join(ROOT, "tokenizer", "testdata")

LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def byte_level(aps=False, use_regex=True):
    return {"type": "ByteLevel", "add_prefix_space": aps, "trim_offsets": True, "use_regex": use_regex}


def split(pattern, behavior="Isolated", invert=False, literal=False):
    return {"type": "Split", "pattern": {"String" if literal else "Regex": pattern}, "behavior": behavior, "invert": invert}


def seq(*ps):
    return {"type": "Sequence", "pretokenizers": list(ps)}


EXTRA = ["Ġtokenizer", "Ġquick", "Ġlazy", "Ġfox"]  # tokens only ignore_merges reaches whole

VARIANTS = [
    ("llama3", dict(pre=seq(split(LLAMA3), byte_level(use_regex=False)), ignore_merges=True, extra=EXTRA)),
    ("llama3_merging", dict(pre=seq(split(LLAMA3), byte_level(use_regex=False)), extra=EXTRA)),
    ("qwen2_nfc", dict(normalizer={"type": "NFC"}, pre=seq(split(QWEN2), byte_level(use_regex=False)))),
    ("nfkc_seq", dict(normalizer={"type": "Sequence", "normalizers": [{"type": "NFKC"}]}, pre=byte_level())),
    ("starcoder_digits", dict(pre=seq({"type": "Digits", "individual_digits": True}, byte_level()))),
    ("digits_runs_prefix", dict(pre=seq({"type": "Digits", "individual_digits": False}, byte_level(aps=True)))),
    ("prefix_space", dict(pre=byte_level(aps=True))),
    ("merged_previous", dict(pre=seq(split("-", "MergedWithPrevious", literal=True), split(r"\s+", "MergedWithNext"), byte_level(use_regex=False)))),
    ("contiguous_invert", dict(pre=seq(split(r"\p{L}", "Contiguous", invert=True), byte_level(use_regex=False)))),
    ("contiguous", dict(pre=seq(split(r"[aeiou]", "Contiguous"), byte_level()))),
]

NORMALIZERS = {"NFC": "NFC", "NFKC": "NFKC"}


def normalize(n, s):
    if n is None:
        return s
    if n["type"] == "Sequence":
        for m in n["normalizers"]:
            s = normalize(m, s)
        return s
    return unicodedata.normalize(NORMALIZERS[n["type"]], s)


def spans(s, matches):
    out, prev = [], 0
    for a, b in matches:
        if a > prev:
            out.append([prev, a, False])
        out.append([a, b, True])
        prev = b
    if prev < len(s):
        out.append([prev, len(s), False])
    return out


def split_pieces(s, sp, behavior, invert):
    if invert:
        sp = [[a, b, not m] for a, b, m in sp]
    parts, prev = [], False
    if behavior == "Isolated":
        parts = sp
    elif behavior == "MergedWithPrevious":
        for a, b, m in sp:
            if m and not prev and parts:
                parts[-1][1] = b
            else:
                parts.append([a, b, False])
            prev = m
    elif behavior == "MergedWithNext":
        for a, b, m in reversed(sp):
            if m and not prev and parts:
                parts[-1][0] = a
            else:
                parts.append([a, b, False])
            prev = m
        parts.reverse()
    elif behavior == "Contiguous":
        for a, b, m in sp:
            if m == prev and parts:
                parts[-1][1] = b
            else:
                parts.append([a, b, False])
            prev = m
    return [s[a:b] for a, b, _ in parts if a < b]


def is_number(c):
    return unicodedata.category(c) in ("Nd", "Nl", "No")


def pre_tokenize(p, s):
    """p: a pre_tokenizer; s: str (surrogateescape) -> list of str pieces."""
    if p["type"] == "Sequence":
        pieces = [s]
        for q in p["pretokenizers"]:
            pieces = [x for piece in pieces for x in pre_tokenize(q, piece)]
        return pieces
    if p["type"] == "ByteLevel":
        if p["add_prefix_space"] and s and not s.startswith(" "):
            s = " " + s
        return PAT.findall(s) if p["use_regex"] else [s]
    if p["type"] == "Split":
        pat = p["pattern"]
        r = regex.compile(pat["Regex"]) if "Regex" in pat else regex.compile(regex.escape(pat["String"]))
        sp = spans(s, [m.span() for m in r.finditer(s)])
        return split_pieces(s, sp, p["behavior"], p["invert"])
    if p["type"] == "Digits":
        sp = spans(s, [(i, i + 1) for i, c in enumerate(s) if is_number(c)])
        return split_pieces(s, sp, "Isolated" if p["individual_digits"] else "Contiguous", False)
    raise ValueError(p["type"])


def encode_ordinary(text, v, vocab, ranks):
    s = normalize(v.get("normalizer"), text.decode("utf-8", "surrogateescape"))
    if not s:
        return []
    ids = []
    for piece in pre_tokenize(v["pre"], s):
        tok = to_alphabet(piece.encode("utf-8", "surrogateescape"))
        if v.get("ignore_merges") and tok in vocab:
            ids.append(vocab[tok])
        else:
            ids.extend(vocab[t] for t in bpe(tok, ranks))
    return ids


def encode(text, v, vocab, ranks, special=False):
    parts = text.split(EOT.encode()) if special else [text]
    ids = []
    for k, part in enumerate(parts):
        if k > 0:
            ids.append(vocab[EOT])
        ids.extend(encode_ordinary(part, v, vocab, ranks))
    return ids


MORE = [
    "Numbers 1234567 and 3.14159, 2024-06-01; ２０２４ ٣٤٥ ½ Ⅻ",
    "The quick brown fox jumps over the lazy dog and the tokenizer",
    "CAPS'S IT'S We'LL they'RE\r\n\r\nnext\n\n  line",
    "ﬁ ligature, ① circled, ｆｕｌｌ width, e\u0301 combining, Å",
    "dash-separated-words and  double  spaces -- x-",
    "<|endoftext|>Hello<|endoftext|> world<|endoftext|>",
]


def main():
    with open(os.path.join(TD, "gpt2-tiny", "vocab.json"), encoding="utf-8") as f:
        base_vocab = json.load(f)
    with open(os.path.join(TD, "gpt2-tiny", "merges.txt"), encoding="utf-8") as f:
        merges = [tuple(l.rstrip("\n").split(" ")) for l in f if l.strip() and not l.startswith("#version")]
    ranks = {m: i for i, m in enumerate(merges)}
    # 300 x's are cases.json's business
    texts = [h.encode("utf-8") for h in HARD + MORE if len(h) < 200] + INVALID
    out = []
    for name, v in VARIANTS:
        vocab = dict(base_vocab)
        extra = {}
        for t in v.get("extra", []):
            if t not in vocab:
                extra[t] = len(vocab)
                vocab[t] = extra[t]
        cases = []
        for text in texts:
            if v.get("normalizer") and text in INVALID:
                continue  # normalizing lone surrogates is Python's business
            ids, ids_special = encode(text, v, vocab, ranks), encode(text, v, vocab, ranks, special=True)
            cases.append({
                "text": base64.b64encode(text).decode(),
                "ids": ids,
                "ids_special": ids_special if ids_special != ids else None,  # null: the same
            })
        out.append({"name": name, "normalizer": v.get("normalizer"), "pre_tokenizer": v["pre"],
                    "ignore_merges": bool(v.get("ignore_merges")), "extra_vocab": extra, "cases": cases})
    with open(os.path.join(TD, "pipeline.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
    print(f"{len(out)} variants, {sum(len(v['cases']) for v in out)} cases")


if __name__ == "__main__":
    main()
