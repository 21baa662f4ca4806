"""Generate a tiny GPT-2 tokenizer and reference ids for package tokenizer.

Run with /usr/bin/python3 (needs python3-regex for \\p{L} and lookahead):
    /usr/bin/python3 testdata/gen_tokenizer_fixtures.py
Writes, under tokenizer/testdata/:
  gpt2-tiny/vocab.json, gpt2-tiny/merges.txt   GPT-2's file formats
  gpt2-tiny-json/tokenizer.json                the same model as a tokenizers
                                               BPE tokenizer.json (ByteLevel)
  cases.json                                   hard strings (base64 bytes) and
                                               their ids, without and with
                                               special tokens recognised

The vocabulary is made by BPE training (most frequent pair, ties to the
smallest pair) on a fixed text; encoding is GPT-2's algorithm as its
encoder.py writes it (bytes_to_unicode, the pattern, bpe by merge rank).
Invalid UTF-8 is decoded with surrogateescape: each undecodable byte is a
character of the class [^\\s\\p{L}\\p{N}] and keeps its byte.
"""
import base64
import json
import os

import regex

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tokenizer", "testdata")
PAT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
EOT = "<|endoftext|>"


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


B2U = bytes_to_unicode()


def pieces(text):
    """text: bytes -> list of bytes pieces (GPT-2's pattern)."""
    s = text.decode("utf-8", "surrogateescape")
    return [m.encode("utf-8", "surrogateescape") for m in PAT.findall(s)]


def to_alphabet(b):
    return "".join(B2U[x] for x in b)


CORPUS = """The quick brown fox jumps over the lazy dog. It's what they're saying: we've
seen it, I'm sure, and they'll say you'd know. Tokenizers split text into pieces;
the pieces become ids. 1234567890 numbers, 2024-06-01, 3.14159 and 42!
Don't stop, won't stop. The the the; and and and. Émile's café serves crème brûlée.
Ελληνικά κείμενα, русский текст, 中文文本, 日本語のテキスト, 한국어 텍스트.
    indented code:
        if x == 1:
            return "yes"  # comment
Emoji: 🙂 🚀 👩‍💻 🇫🇷 and more text, text, text.
"""


def train(n_merges):
    words = {}
    for p in pieces(CORPUS.encode()):
        w = tuple(to_alphabet(p))
        words[w] = words.get(w, 0) + 1
    merges = []
    for _ in range(n_merges):
        counts = {}
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + c
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        merges.append(best)
        nw = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            nw[tuple(out)] = nw.get(tuple(out), 0) + c
        words = nw
    return merges


def bpe(token, ranks):
    word = tuple(token)
    while len(word) > 1:
        pairs = set(zip(word, word[1:]))
        best = min(pairs, key=lambda p: ranks.get(p, float("inf")))
        if best not in ranks:
            break
        a, b = best
        out, i = [], 0
        while i < len(word):
            try:
                j = word.index(a, i)
            except ValueError:
                out.extend(word[i:])
                break
            out.extend(word[i:j])
            i = j
            if i < len(word) - 1 and word[i] == a and word[i + 1] == b:
                out.append(a + b)
                i += 2
            else:
                out.append(word[i])
                i += 1
        word = tuple(out)
    return word


def encode(text, vocab, ranks, special=False):
    ids = []
    parts = [text]
    if special:
        parts = text.split(EOT.encode())
    for k, part in enumerate(parts):
        if k > 0:
            ids.append(vocab[EOT])
        for p in pieces(part):
            ids.extend(vocab[t] for t in bpe(to_alphabet(p), ranks))
    return ids


HARD = [
    "",
    "Hello world",
    "Hello, world! How's it going? I'm fine; they're here, we've gone, you'll see, he'd go.",
    "DON'T SHOUT'S 'S 'LL 'd 'x",  # GPT-2 matches only lower-case contractions
    "   leading spaces and trailing   ",
    "a  b   c    d\t\te\n\nf\r\n",
    "line one\nline two\n\n\n    indented\n",
    "numbers 1234567890 3.14159 -42 1e10 ２０２４ ٣٤٥",
    "café crème brûlée naïve résumé Ångström",
    "Ελληνικά русский 中文文本 日本語のテキスト 한국어",
    "Emoji 🙂🚀 👩‍💻 family 👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵 skin 👍🏽",
    "combining e\u0301 a\u0308 and zero\u200bwidth",
    "mixed<|endoftext|>special <|endoftext|> tokens<|endoftext|>",
    "<|endoftext|>",
    "<|endoftext",
    "tabs\tand\u00a0nbsp\u2003em space\u3000ideographic",
    "punctuation!!! ??? ... --- ((())) [] {} @#$%^&*",
    "The quick brown fox jumps over the lazy dog. It's what they're saying.",
    "x" * 300,
]
INVALID = [
    b"\xff\xfe invalid \x80 bytes \xc3",
    b"caf\xc3 \xe2\x82 truncated \xf0\x9f\x99",
    b"\xed\xa0\x80 surrogate and overlong \xc0\xaf",
    b"ok\xff",
    bytes(range(256)),
]


def main():
    merges = train(400)
    vocab = {B2U[b]: i for i, b in enumerate(range(256))}
    for a, b in merges:
        if a + b not in vocab:
            vocab[a + b] = len(vocab)
    vocab[EOT] = len(vocab)
    ranks = {m: i for i, m in enumerate(merges)}
    d1 = os.path.join(OUT, "gpt2-tiny")
    d2 = os.path.join(OUT, "gpt2-tiny-json")
    os.makedirs(d1, exist_ok=True)
    os.makedirs(d2, exist_ok=True)
    with open(os.path.join(d1, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(d1, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(f"{a} {b}\n")
    tj = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": vocab[EOT], "content": EOT, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": True, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                  "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
    }
    with open(os.path.join(d2, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False)
    cases = []
    for text in [h.encode("utf-8") for h in HARD] + INVALID:
        cases.append({
            "text": base64.b64encode(text).decode(),
            "ids": encode(text, vocab, ranks),
            "ids_special": encode(text, vocab, ranks, special=True),
            "pieces": [base64.b64encode(p).decode() for p in pieces(text)],
        })
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(cases, f, indent=0)
    print(f"{len(merges)} merges, {len(vocab)} tokens, {len(cases)} cases")


if __name__ == "__main__":
    main()
