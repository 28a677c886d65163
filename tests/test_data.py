"""Checks for the toy English->German corpus in course_utils/data/ (stdlib + pytest only)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "course_utils" / "data"
SCRIPT = ROOT / "tools" / "make_corpus.py"
CORPUS = DATA / "corpus.tsv"
PROBES = DATA / "probes.tsv"

PATTERNS = ("plain", "can", "want", "would_like")
INFINITIVES = {"essen", "trinken", "lesen"}
MODALS = {"kann", "kannst", "können", "will", "willst", "wollen", "möchte", "möchtest", "möchten"}

COURSE_SENTENCES = {
    "we want to eat apple": "wir wollen einen apfel essen",
    "we want to eat bread": "wir wollen brot essen",
    "we can eat apple": "wir können einen apfel essen",
    "i can eat apple": "ich kann einen apfel essen",
    "i can eat bread": "ich kann brot essen",
    "we eat bread": "wir essen brot",
    "we eat apple": "wir essen einen apfel",
    "i eat apple": "ich esse einen apfel",
    "i eat bread": "ich esse brot",
    "i drink water": "ich trinke wasser",
    "i drink beer": "ich trinke bier",
    "i read newspaper": "ich lese eine zeitung",
    "i read book": "ich lese ein buch",
    "we drink water": "wir trinken wasser",
    "we drink beer": "wir trinken bier",
    "we read newspaper": "wir lesen eine zeitung",
    "we read book": "wir lesen ein buch",
}

EXPECTED_PROBES = [
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


def read_tsv(path):
    text = path.read_bytes().decode("utf-8")
    assert "\r" not in text, f"{path.name} must use LF line endings"
    assert text.endswith("\n")
    lines = text[:-1].split("\n")
    return [line.split("\t") for line in lines]


@pytest.fixture(scope="module")
def corpus():
    table = read_tsv(CORPUS)
    assert table[0] == ["english", "german", "split", "pattern"]
    assert all(len(row) == 4 for row in table)
    return [dict(zip(table[0], row)) for row in table[1:]]


@pytest.fixture(scope="module")
def train(corpus):
    return [r for r in corpus if r["split"] == "train"]


@pytest.fixture(scope="module")
def heldout(corpus):
    return [r for r in corpus if r["split"] == "heldout"]


def test_generator_reproduces_files(tmp_path):
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path)], check=True)
    assert (tmp_path / "corpus.tsv").read_bytes() == CORPUS.read_bytes()
    assert (tmp_path / "probes.tsv").read_bytes() == PROBES.read_bytes()


def test_generator_is_stdlib_only():
    imports = [
        line for line in SCRIPT.read_text(encoding="utf-8").splitlines() if line.startswith(("import ", "from "))
    ]
    modules = {line.split()[1].split(".")[0] for line in imports}
    assert modules <= {"argparse", "pathlib", "random", "__future__"}, modules


def test_counts(corpus, train, heldout):
    assert 100 <= len(corpus) <= 400
    assert len(corpus) == 264
    assert len(train) == 240
    assert len(heldout) == 24
    assert {r["split"] for r in corpus} == {"train", "heldout"}
    for pattern in PATTERNS:
        rows = [r for r in corpus if r["pattern"] == pattern]
        assert len(rows) == 66
        assert sum(r["split"] == "heldout" for r in rows) == 6


def test_rows_in_documented_order(corpus):
    order = [PATTERNS.index(r["pattern"]) for r in corpus]
    assert order == sorted(order)
    assert corpus[0]["english"] == "i eat apple"
    assert corpus[-1]["english"] == "they would like to read letter"


def test_no_duplicates(corpus):
    english = [r["english"] for r in corpus]
    assert len(set(english)) == len(english)
    german = [r["german"] for r in corpus]
    assert len(set(german)) == len(german)


def test_course_sentences_are_train(corpus):
    by_english = {r["english"]: r for r in corpus}
    for english, german in COURSE_SENTENCES.items():
        row = by_english[english]
        assert row["split"] == "train", english
        assert row["german"] == german, english


def test_heldout_words_seen_in_train(train, heldout):
    for lang in ("english", "german"):
        vocab = {w for r in train for w in r[lang].split()}
        for r in heldout:
            missing = set(r[lang].split()) - vocab
            assert not missing, (r[lang], missing)


def test_heldout_sentences_not_in_train(train, heldout):
    train_en = {r["english"] for r in train}
    train_de = {r["german"] for r in train}
    for r in heldout:
        assert r["english"] not in train_en
        assert r["german"] not in train_de


def test_heldout_triple_parts_seen_in_train(train, heldout):
    def triple(r):
        words = r["english"].split()
        return words[0], r["pattern"], words[-1]

    seen_subj_pat = {triple(r)[:2] for r in train}
    seen_pat_obj = {triple(r)[1:] for r in train}
    for r in heldout:
        subj, pat, obj = triple(r)
        assert (subj, pat) in seen_subj_pat, r
        assert (pat, obj) in seen_pat_obj, r


def test_lowercase_tokenised(corpus):
    for r in corpus:
        for text in (r["english"], r["german"]):
            assert text == text.lower()
            assert text == " ".join(text.split())
            assert all(ch.isalpha() or ch == " " for ch in text), text


def test_umlauts_present(corpus):
    german_words = {w for r in corpus for w in r["german"].split()}
    assert {"können", "möchten", "möchte"} <= german_words


def test_word_order(corpus):
    german_subjects = {"ich", "du", "er", "sie", "wir"}
    finite_forms = {"esse", "isst", "essen", "trinke", "trinkst", "trinkt", "trinken", "lese", "liest", "lesen"}
    for r in corpus:
        words = r["german"].split()
        assert words[0] in german_subjects
        if r["pattern"] == "plain":
            assert words[1] in finite_forms, r
            assert len(r["english"].split()) == 3
        else:
            assert words[-1] in INFINITIVES, r
            assert words[1] in MODALS, r
            assert not set(words[2:-1]) & (finite_forms | INFINITIVES), r


def test_modal_forms(corpus):
    expected = {"can": "können", "want": "wollen", "would_like": "möchten"}
    for r in corpus:
        if r["english"].startswith("we ") and r["pattern"] in expected:
            assert r["german"].split()[1] == expected[r["pattern"]], r


def test_probes_exact():
    table = read_tsv(PROBES)
    assert table[0] == ["probe_set", "english", "german_reference"]
    assert [tuple(row) for row in table[1:]] == EXPECTED_PROBES


def test_probe_references_match_grammar(corpus):
    by_english = {r["english"]: r["german"] for r in corpus}
    for _, english, reference in EXPECTED_PROBES:
        if reference and english in by_english:
            assert by_english[english] == reference
    # every word of a probe must be in the English training vocabulary
    train_vocab = {w for r in corpus if r["split"] == "train" for w in r["english"].split()}
    train_de_vocab = {w for r in corpus if r["split"] == "train" for w in r["german"].split()}
    for _, english, reference in EXPECTED_PROBES:
        assert set(english.split()) <= train_vocab, english
        assert set(reference.split()) <= train_de_vocab, reference
