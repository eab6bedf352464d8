"""Hamming search of corpus hashes against the benchmark's: faiss binary indexes, one per hash family.

The benchmark side is small (a few hundred images; PDQ with 8 dihedral variants each), so each family's
benchmark hashes are the index and each batch of corpus hashes the queries: ``range_search`` returns every
pair within the family's threshold, with SIMD popcounts on every core (a Python loop over pairs would take
hours for a million-image corpus; numpy's broadcast popcount about 250 s).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cogbench.dataset_builders.fingerprints import FAMILIES
from cogbench.errors import UsageError

LEAK_SCAN_EXTRA = "leak-scan"
_NIBBLE = np.full(256, 255, dtype=np.uint8)
for _value, _char in enumerate(b"0123456789abcdef"):
    _NIBBLE[_char] = _value
for _value, _char in enumerate(b"ABCDEF", start=10):
    _NIBBLE[_char] = _value
# Bits set in each byte value (numpy's own bitwise_count needs numpy 2; the core install allows 1.24).
POPCOUNT = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(axis=1).astype(np.uint8)


def faiss_module():
    """faiss, or the one-line error that names the extra holding it."""
    try:
        import faiss
    except ModuleNotFoundError:
        raise UsageError(
            f"`cogbench leak-scan` needs faiss (the `{LEAK_SCAN_EXTRA}` extra): "
            f"pip install 'cogbench-codis[{LEAK_SCAN_EXTRA}]'"
        ) from None
    return faiss


def hex_codes(hexes, bits: int, where: str) -> np.ndarray:
    """A pyarrow string array (or a list) of hex hashes as an (n, bits / 8) uint8 array, vectorised."""
    import pyarrow as pa

    array = hexes if isinstance(hexes, pa.Array) else pa.array(list(hexes), type=pa.string())
    if pa.types.is_large_string(array.type):
        array = array.cast(pa.string())
    if not pa.types.is_string(array.type):
        raise UsageError(f"{where}: hex strings expected, the column holds {array.type}")
    width = bits // 4
    if array.null_count:
        raise UsageError(f"{where}: row {array.to_pylist().index(None)}: an empty hash")
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[array.offset : array.offset + len(array) + 1]
    wrong = np.flatnonzero(np.diff(offsets) != width)
    if wrong.size:
        raise UsageError(f"{where}: row {wrong[0]}: not {width} hex digits ({bits} bits)")
    if not len(array):
        return np.zeros((0, bits // 8), dtype=np.uint8)
    chars = np.frombuffer(array.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    nibbles = _NIBBLE[chars]
    bad = np.flatnonzero(nibbles == 255)
    if bad.size:
        raise UsageError(f"{where}: row {bad[0] // width}: not a hex digit")
    return ((nibbles[0::2] << 4) | nibbles[1::2]).reshape(len(array), bits // 8)


@dataclass
class FamilyIndex:
    """One family's benchmark hashes: ``variants`` codes per image (PDQ: 8, the others: 1)."""

    family: str
    threshold: int
    variants: int
    index: object

    def pairs(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(corpus row, benchmark image, distance) of every pair within the threshold (the closest variant)."""
        if not len(codes):
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        lims, distances, labels = self.index.range_search(np.ascontiguousarray(codes), self.threshold + 1)
        rows = np.repeat(np.arange(len(codes)), np.diff(lims).astype(np.int64))
        images = labels.astype(np.int64) // self.variants
        order = np.lexsort((distances, images, rows))  # per (row, image): the closest variant first
        rows, images, distances = rows[order], images[order], distances[order]
        first = np.ones(len(rows), dtype=bool)
        first[1:] = (rows[1:] != rows[:-1]) | (images[1:] != images[:-1])
        return rows[first], images[first], distances[first].astype(np.int64)


def family_index(family: str, codes: np.ndarray, variants: int, threshold: int) -> FamilyIndex:
    faiss = faiss_module()
    index = faiss.IndexBinaryFlat(FAMILIES[family])
    index.add(np.ascontiguousarray(codes.reshape(-1, FAMILIES[family] // 8)))
    return FamilyIndex(family, threshold, variants, index)


def distances(codes: np.ndarray, benchmark: np.ndarray) -> np.ndarray:
    """Hamming distances of (n, B) codes to (m, v, B) benchmark codes: (n, m), the closest of the v variants.
    For the few flagged pairs (the report shows every family's distance) and the calibration's matrices."""
    xor = codes[:, None, None, :] ^ benchmark[None, :, :, :]
    return POPCOUNT[xor].sum(axis=-1, dtype=np.int64).min(axis=-1)


def closest_variant(code: np.ndarray, variants: np.ndarray) -> tuple[int, int]:
    """(index, distance) of the closest of one image's variant codes (PDQ's dihedral: which flip or turn)."""
    found = POPCOUNT[code[None, :] ^ variants].sum(axis=-1, dtype=np.int64)
    best = int(found.argmin())
    return best, int(found[best])
