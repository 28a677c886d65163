"""Generate the tiny English->German toy corpus for the "Understanding Q, K, V" course.

Usage:
    python tools/make_corpus.py [--out DIR]

Writes corpus.tsv and probes.tsv into DIR (default: course_utils/data/, the package data the course reads).
Standard library only, no randomness: the output is byte-for-byte reproducible.
"""

import argparse
from pathlib import Path

# English subject, German subject. Index 0..5 is also the conjugation slot.
SUBJECTS = [("i", "ich"), ("you", "du"), ("he", "er"), ("she", "sie"), ("we", "wir"), ("they", "sie")]

# English base form, English 3rd-person singular, German infinitive, German present forms per subject.
VERBS = {
    "eat": ("eats", "essen", ["esse", "isst", "isst", "isst", "essen", "essen"]),
    "drink": ("drinks", "trinken", ["trinke", "trinkst", "trinkt", "trinkt", "trinken", "trinken"]),
    "read": ("reads", "lesen", ["lese", "liest", "liest", "liest", "lesen", "lesen"]),
}

# (verb, English object, German object with the article German needs), in corpus order.
OBJECTS = [
    ("eat", "apple", "einen apfel"),
    ("eat", "bread", "brot"),
    ("eat", "cake", "einen kuchen"),
    ("eat", "soup", "suppe"),
    ("drink", "water", "wasser"),
    ("drink", "beer", "bier"),
    ("drink", "milk", "milch"),
    ("drink", "tea", "tee"),
    ("read", "newspaper", "eine zeitung"),
    ("read", "book", "ein buch"),
    ("read", "letter", "einen brief"),
]

# pattern name -> (English modal words for non-3rd-person, for 3rd-person singular, German modal per subject).
# "plain" has no modal: the conjugated main verb stands second in German.
PATTERNS = {
    "plain": None,
    "can": ("can", "can", ["kann", "kannst", "kann", "kann", "können", "können"]),
    "want": ("want to", "wants to", ["will", "willst", "will", "will", "wollen", "wollen"]),
    "would_like": ("would like to", "would like to", ["möchte", "möchtest", "möchte", "möchte", "möchten", "möchten"]),
}

HELDOUT_RESIDUE = 7


def is_heldout(s: int, p: int, o: int) -> bool:
    """Held-out rule on indices into SUBJECTS, PATTERNS and OBJECTS (see README)."""
    return (s + 2 * p + o) % len(OBJECTS) == HELDOUT_RESIDUE


def make_pair(s: int, pattern: str, o: int) -> tuple[str, str]:
    en_subj, de_subj = SUBJECTS[s]
    verb, en_obj, de_obj = OBJECTS[o]
    en_3sg, de_inf, de_forms = VERBS[verb]
    third = en_subj in ("he", "she")
    modal = PATTERNS[pattern]
    if modal is None:
        english = f"{en_subj} {en_3sg if third else verb} {en_obj}"
        german = f"{de_subj} {de_forms[s]} {de_obj}"
    else:
        en_modal, en_modal_3sg, de_modal = modal
        english = f"{en_subj} {en_modal_3sg if third else en_modal} {verb} {en_obj}"
        german = f"{de_subj} {de_modal[s]} {de_obj} {de_inf}"
    return english, german


def corpus_rows() -> list[tuple[str, str, str, str]]:
    rows = []
    for p, pattern in enumerate(PATTERNS):
        for s in range(len(SUBJECTS)):
            for o in range(len(OBJECTS)):
                english, german = make_pair(s, pattern, o)
                split = "heldout" if is_heldout(s, p, o) else "train"
                rows.append((english, german, split, pattern))
    return rows


PROBES = [
    ("word_order", "we can eat apple", "wir können einen apfel essen"),
    ("word_order", "apple eat can we", ""),
    ("five_sentences", "i can eat apple", "ich kann einen apfel essen"),
    ("five_sentences", "i can eat bread", "ich kann brot essen"),
    ("five_sentences", "i can eat book", "ich kann ein buch essen"),
    ("five_sentences", "i can eat newspaper", "ich kann eine zeitung essen"),
    ("five_sentences", "i can eat apple book", ""),
    ("context_pair", "we want to eat apple", "wir wollen einen apfel essen"),
    ("context_pair", "we want to eat bread", "wir wollen brot essen"),
]


def write_tsv(path: Path, header: tuple[str, ...], rows) -> None:
    lines = ["\t".join(header)] + ["\t".join(row) for row in rows]
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "course_utils" / "data")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    write_tsv(args.out / "corpus.tsv", ("english", "german", "split", "pattern"), corpus_rows())
    write_tsv(args.out / "probes.tsv", ("probe_set", "english", "german_reference"), PROBES)


if __name__ == "__main__":
    main()
