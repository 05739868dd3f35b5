"""cowbird.build.dedup: repeated paragraphs, exact keys, MinHash signatures and corpus-wide duplicates."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from datasketch import MinHash

from cowbird.build.dedup import (
    NUM_PERM,
    band_keys,
    block_key,
    drop_repeated_blocks,
    exact_key,
    find_duplicates,
    load_signatures,
    save_signatures,
    shingles,
    signature,
    similarity,
)
from cowbird.build.records import Block

WORDS = ("house garden river mountain table window letter paper street city music morning evening friend "
         "teacher doctor market bread water coffee summer winter station train ticket office money story "
         "picture color light night forest village bridge castle school church kitchen yellow green quiet "
         "happy strong little early heavy simple modern ancient famous public private").split()


def _document(rng: random.Random, length: int = 300) -> list[str]:
    return [rng.choice(WORDS) for _ in range(length)]


def _changed(rng: random.Random, words: list[str], share: float) -> list[str]:
    changed = list(words)
    for _ in range(round(share * len(words))):
        position = rng.randrange(len(changed))
        operation = rng.randrange(3)
        if operation == 0:
            changed[position] = rng.choice(WORDS)
        elif operation == 1:
            changed.insert(position, rng.choice(WORDS))
        else:
            del changed[position]
    return changed


def _shard(folder: Path, name: str, ids: list[str], texts: list[str]) -> Path:
    path = folder / f"{name}.sig.npz"
    save_signatures(path, ids, [exact_key(text) for text in texts], [signature(text) for text in texts])
    return path


def test_repeated_blocks_are_marked_and_the_first_kept() -> None:
    blocks = [
        Block("Welcome to our shop!", "h"),
        Block("Fresh bread every morning.", "p"),
        Block("Page 1 of 5", "div"),
        Block("fresh  BREAD every morning", "p"),
        Block("Page 2 of 5", "div"),
        Block("—", "p"),
        Block("—", "p"),
        Block("Already marked", "p", duplicate=True),
    ]
    result = drop_repeated_blocks(blocks)
    assert [block.duplicate for block in result] == [False, False, False, True, True, False, False, True]
    assert [block.text for block in result] == [block.text for block in blocks]
    assert not blocks[3].duplicate  # the input is not changed
    assert block_key("Reply · 12 likes") == block_key("reply 3 Likes") == "reply 0 likes"


def test_exact_key_ignores_case_whitespace_and_punctuation_but_not_words() -> None:
    key = exact_key("The cat sat on the mat.")
    assert len(key) == 16
    assert exact_key("  the CAT sat\n\non the mat ") == key
    assert exact_key("The cat sat on a mat.") != key
    assert exact_key("The cat sat on the mat. 2024") != key


def test_shingles_are_word_triples() -> None:
    assert shingles("One two, three four!") == [b"one two three", b"two three four"]
    assert shingles("Just two") == [b"just two"]
    assert shingles("...") == []


def test_signature_is_datasketchs_minhash_of_the_shingles() -> None:
    text = "Der Gemeinderat hat am Dienstagabend beschlossen, die Sanierung der Grundschule zu verschieben."
    reference = MinHash(num_perm=NUM_PERM, seed=1, scheme="affine32")
    for shingle in shingles(text):
        reference.update(shingle)
    ours = signature(text)
    assert ours.dtype == np.uint32 and ours.shape == (NUM_PERM,)
    assert np.array_equal(ours, reference.hashvalues)
    assert np.all(signature("") == 2**32 - 1)
    long_text = " ".join(f"w{number % 9973}" for number in range(20_000))  # five batches of shingles
    reference = MinHash(num_perm=NUM_PERM, seed=1, scheme="affine32")
    reference.update_batch(shingles(long_text))
    assert np.array_equal(signature(long_text), reference.hashvalues)


def test_similarity_estimates_jaccard_as_datasketch_does() -> None:
    rng = random.Random(3)
    words = _document(rng, 400)
    other = " ".join(_changed(rng, words, 0.10))
    text = " ".join(words)
    first, second = MinHash(num_perm=NUM_PERM, seed=1, scheme="affine32"), MinHash(num_perm=NUM_PERM, seed=1,
                                                                                  scheme="affine32")
    first.update_batch(shingles(text))
    second.update_batch(shingles(other))
    assert similarity(signature(text), signature(other)) == pytest.approx(first.jaccard(second))
    a, b = set(shingles(text)), set(shingles(other))
    assert similarity(signature(text), signature(other)) == pytest.approx(len(a & b) / len(a | b), abs=0.15)


def test_signatures_round_trip_through_a_shard_file(tmp_path: Path) -> None:
    texts = ["first document here", "second document there", ""]
    path = tmp_path / "00000.sig.npz"
    save_signatures(path, ["00000-0000000", "00000-0000001", "00000-0000002"],
                    [exact_key(text) for text in texts], [signature(text) for text in texts])
    ids, keys, signatures = load_signatures(path)
    assert ids == ["00000-0000000", "00000-0000001", "00000-0000002"]
    assert keys.shape == (3, 16) and bytes(keys[1]) == exact_key(texts[1])
    assert signatures.shape == (3, NUM_PERM) and np.array_equal(signatures[0], signature(texts[0]))
    assert [p.name for p in tmp_path.iterdir()] == ["00000.sig.npz"]  # no temporary file left
    empty = tmp_path / "00001.sig.npz"
    save_signatures(empty, [], [], [])
    assert load_signatures(empty)[0] == []


def test_bad_signature_input_and_files_say_what_and_where(tmp_path: Path) -> None:
    path = tmp_path / "bad.sig.npz"
    with pytest.raises(ValueError, match=r"bad\.sig\.npz: 2 ids, 1 keys"):
        save_signatures(path, ["a", "b"], [exact_key("a")], [signature("a"), signature("b")])
    with pytest.raises(ValueError, match="16 bytes"):
        save_signatures(path, ["a"], [b"short"], [signature("a")])
    path.write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match=r"bad\.sig\.npz: not a signature file"):
        load_signatures(path)
    with pytest.raises(ValueError, match=r"bad\.sig\.npz: not a signature file"):
        find_duplicates([path])


def test_band_keys_are_equal_exactly_where_bands_are() -> None:
    rng = np.random.default_rng(5)
    signatures = rng.integers(0, 2**32, size=(3, NUM_PERM), dtype=np.uint32)
    signatures[1, :3] = signatures[0, :3]  # band 0 shared by documents 0 and 1
    signatures[2, 3:6] = signatures[0, :3]  # the same values in band 1: a different key
    keys = band_keys(signatures, 42, 3)
    assert keys.shape == (3, 42) and keys.dtype == np.uint64
    assert keys[0, 0] == keys[1, 0]
    assert keys[2, 1] != keys[0, 0]
    assert len(set(keys[:, 5].tolist())) == 3


def test_exact_and_near_duplicates_across_shards_keep_the_earliest(tmp_path: Path) -> None:
    rng = random.Random(66)
    originals = [_document(rng) for _ in range(30)]
    texts = [" ".join(words) for words in originals]
    # 30-33: near duplicates of 0, 5, 31 (a near duplicate of a near duplicate: kept is 5) and 12
    texts.append(" ".join(_changed(rng, originals[0], 0.05)))
    texts.append(" ".join(_changed(rng, originals[5], 0.10)))
    texts.append(" ".join(_changed(rng, texts[31].split(), 0.03)))
    texts.append(" ".join(_changed(rng, originals[12], 0.01)))
    texts.append(texts[7].upper())  # 34: an exact duplicate of 7
    texts.append(texts[34] + " ")  # 35: an exact duplicate of 7 too
    texts.append(texts[31].lower())  # 36: an exact copy of 31, which is removed: kept is 5
    ids = [f"doc{number:03d}" for number in range(len(texts))]
    shards = [_shard(tmp_path, "00000", ids[:12], texts[:12]), _shard(tmp_path, "00001", ids[12:25], texts[12:25]),
              _shard(tmp_path, "00002", [], []), _shard(tmp_path, "00003", ids[25:], texts[25:])]
    removed = find_duplicates(shards, work=tmp_path / "dedup")
    assert removed == [
        ("doc030", "near duplicate", "doc000"),
        ("doc031", "near duplicate", "doc005"),
        ("doc032", "near duplicate", "doc005"),
        ("doc033", "near duplicate", "doc012"),
        ("doc034", "exact duplicate", "doc007"),
        ("doc035", "exact duplicate", "doc007"),
        ("doc036", "exact duplicate", "doc005"),
    ]
    assert list((tmp_path / "dedup").iterdir()) == []  # the scratch files are gone


def test_the_answer_does_not_depend_on_the_memory_bound(tmp_path: Path) -> None:
    rng = random.Random(7)
    originals = [_document(rng, rng.randint(100, 400)) for _ in range(200)]
    texts = [" ".join(words) for words in originals]
    for _ in range(40):
        texts.append(" ".join(_changed(rng, originals[rng.randrange(200)], rng.choice((0.01, 0.05, 0.1)))))
    for _ in range(10):
        texts.append(texts[rng.randrange(200)])
    ids = [f"{number // 100:05d}-{number:07d}" for number in range(len(texts))]
    shards = [_shard(tmp_path, f"{start // 100:05d}", ids[start : start + 100], texts[start : start + 100])
              for start in range(0, len(texts), 100)]
    roomy = find_duplicates(shards)
    tight = find_duplicates(shards, memory=4096)  # a bucket per 2**k key range: many bucket files
    assert roomy == tight
    assert sum(reason == "exact duplicate" for _, reason, _ in roomy) >= 10
    assert sum(reason == "near duplicate" for _, reason, _ in roomy) >= 40
    assert all(kept < removed for removed, _, kept in roomy)


def test_unrelated_documents_are_not_duplicates(tmp_path: Path) -> None:
    rng = random.Random(11)
    texts = [" ".join(_document(rng, 200)) for _ in range(100)]
    shard = _shard(tmp_path, "00000", [f"d{number}" for number in range(100)], texts)
    assert find_duplicates([shard]) == []
    assert find_duplicates([]) == []


def test_too_many_bands_for_the_signature_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="need 132 MinHash values"):
        find_duplicates([tmp_path / "none.sig.npz"], bands=44, rows=3)


def test_documents_sharing_a_key_are_paired_with_a_bounded_window(monkeypatch: pytest.MonkeyPatch) -> None:
    from cowbird.build import dedup

    keys = np.array([5, 5, 5, 7, 9, 9], dtype=np.uint64)
    docs = np.array([1, 2, 3, 4, 5, 6], dtype=np.uint64)
    assert sorted(map(tuple, dedup._neighbours(keys, docs).tolist())) == [(1, 2), (1, 3), (2, 3), (5, 6)]
    monkeypatch.setattr(dedup, "WINDOW", 1)
    assert sorted(map(tuple, dedup._neighbours(keys, docs).tolist())) == [(1, 2), (2, 3), (5, 6)]
    assert dedup._neighbours(keys[:1], docs[:1]).shape == (0, 2)
