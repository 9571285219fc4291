"""What a sweep runs: the grid of `--set` values, `--random` samples and `--variant` selections, as runs with
stable ids (the same run has the same id in every invocation, so a sweep resumes by skipping the ids it
already has)."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass, field

import numpy as np
from pxr import Sdf

from ..errors import UsdartError

DISTRIBUTIONS = ("uniform", "normal", "loguniform")


@dataclass(frozen=True)
class Run:
    """One simulation of a sweep: attribute values (USD units, `PRIM.ATTR` keys) and variant selections
    (`PRIM:SET` keys) on top of the input stage; `sample` and `seed` for runs drawn at random (-1 otherwise)."""

    values: dict = field(default_factory=dict)
    variants: dict = field(default_factory=dict)
    sample: int = -1
    seed: int = -1

    @property
    def run_id(self) -> str:
        key = json.dumps([sorted(self.values.items()), sorted(self.variants.items()), self.sample, self.seed])
        return hashlib.sha1(key.encode()).hexdigest()[:16]


def attribute_path(text: str, option: str) -> str:
    """`PRIM.ATTR` (e.g. /World/joint.drive:angular:physics:stiffness) checked as a USD property path."""
    if not Sdf.Path.IsValidPathString(text) or not Sdf.Path(text).IsPropertyPath():
        raise UsdartError(f"{option} {text!r}: expected PRIM.ATTR, e.g. /World/joint.drive:angular:physics:stiffness")
    return text


def parse_set(text: str) -> tuple[str, list[float]]:
    """`PRIM.ATTR=v1,v2,...` -> (path, values)."""
    path, _, values = text.partition("=")
    attribute_path(path, "--set")
    numbers = [_number(v, f"--set {path}") for v in values.split(",") if v.strip()]
    if not numbers:
        raise UsdartError(f"--set {text!r}: no values after '=' (PRIM.ATTR=v1,v2,...)")
    return path, numbers


def parse_random(text: str) -> tuple[str, str, float, float]:
    """`PRIM.ATTR=uniform(a,b)` (or normal(mean,std), loguniform(a,b)) -> (path, distribution, a, b)."""
    path, _, spec = text.partition("=")
    attribute_path(path, "--random")
    found = re.fullmatch(r"\s*(\w+)\s*\(([^,]+),([^,]+)\)\s*", spec)
    if not found or found.group(1) not in DISTRIBUTIONS:
        raise UsdartError(f"--random {text!r}: expected PRIM.ATTR=uniform(a,b), normal(mean,std) or loguniform(a,b)")
    name = found.group(1)
    a, b = (_number(found.group(i), f"--random {path}") for i in (2, 3))
    if (
        (name == "uniform" and not a < b)
        or (name == "normal" and not b > 0)
        or (name == "loguniform" and not 0 < a < b)
    ):
        raise UsdartError(f"--random {text!r}: {name} needs {'0 < a < b' if name == 'loguniform' else 'a < b'}")
    return path, name, a, b


def parse_variant(text: str) -> tuple[str, list[str]]:
    """`PRIM:SET=a,b,...` -> ("PRIM:SET", selections)."""
    key, _, names = text.partition("=")
    prim, _, variant_set = key.rpartition(":")
    selections = [n.strip() for n in names.split(",") if n.strip()]
    if not prim or not variant_set or not Sdf.Path.IsValidPathString(prim) or not selections:
        raise UsdartError(f"--variant {text!r}: expected PRIM:SET=a,b,... e.g. /World/robot:version=v1,v2")
    return key, selections


def plan(sets=(), randoms=(), samples: int = 0, seed: int = 0, variants=()) -> list[Run]:
    """Every combination of the `--set` values and `--variant` selections; with `--random`, `samples` draws
    for each combination, sample i drawn from a generator seeded with (seed, i) whatever else runs."""
    grid = [parse_set(s) for s in sets]
    choices = [parse_variant(v) for v in variants]
    draws = [parse_random(r) for r in randoms]
    if draws and samples < 1:
        raise UsdartError("--random needs --samples N (N >= 1)")
    keys = [p for p, _ in grid] + [p for p, *_ in draws]
    if len(set(keys)) != len(keys):
        raise UsdartError("an attribute is swept twice (give each PRIM.ATTR once, in --set or --random)")
    runs = []
    for values in itertools.product(*(v for _, v in grid)):
        for selection in itertools.product(*(v for _, v in choices)):
            fixed = dict(zip((p for p, _ in grid), values))
            chosen = dict(zip((k for k, _ in choices), selection))
            if not draws:
                runs.append(Run(fixed, chosen))
                continue
            for i in range(samples):
                rng = np.random.default_rng([seed, i])
                drawn = {p: _draw(rng, name, a, b) for p, name, a, b in draws}
                runs.append(Run({**fixed, **drawn}, chosen, i, seed))
    return runs


def _draw(rng, name: str, a: float, b: float) -> float:
    if name == "uniform":
        return float(rng.uniform(a, b))
    if name == "normal":
        return float(rng.normal(a, b))
    return float(math.exp(rng.uniform(math.log(a), math.log(b))))


def _number(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsdartError(f"{where}: {text.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise UsdartError(f"{where}: {text.strip()} is not a finite number")
    return value
