#!/usr/bin/env python3
"""Extract the keys and flags an engine release accepts, as the data tests/engines/releases/ keeps.

How tests/engines/releases/<engine>@<tag>/<config>.keys were made: from a git directory holding the engine's
repository (any clone, or realign's stored snapshot), read at the release's tag, nothing run:

  scripts/release_keys.py verl     GIT_DIR v0.9.0   tests/engines/releases
  scripts/release_keys.py openrlhf GIT_DIR v0.11.0  tests/engines/releases
  scripts/release_keys.py areal    GIT_DIR v2.0.0   tests/engines/releases
  scripts/release_keys.py nemo-rl  GIT_DIR v0.7.0   tests/engines/releases

Per engine, what a launch's keys are checked against:
- veRL: the Hydra trees the launch names with --config-name: the generated ppo_megatron_trainer and
  ppo_trainer trees (verl/trainer/config/_generated_*.yaml, every leaf: Hydra refuses an override of a key
  the tree lacks), and the fully_async recipe's configs composed over them (their defaults list).
- OpenRLHF: every option string of train_ppo_ray.py's argparse (add_argument calls, read from the syntax tree);
  `switch` marks store_true options, which take no value.
- AReaL: the dataclass tree of areal/api/cli_args.py from PPOConfig and GRPOConfig (fields, nested dataclass
  fields, inherited ones), as OmegaConf's structured config accepts them.
- NeMo-RL: the example configs the launch names with --config, composed as NeMo-RL loads them (the
  `defaults` file first, a mapping marked `_override_: true` replacing its parent's).
Each file's header names the repository, tag, commit and source files.
"""
import ast
import os
import subprocess
import sys

import yaml


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True,
                          text=True).stdout


def show(git_dir, tag, path):
    return git(git_dir, "show", f"{tag}:{path}")


def exists(git_dir, tag, path):
    return subprocess.run(["git", "--git-dir", git_dir, "cat-file", "-e", f"{tag}:{path}"],
                          capture_output=True).returncode == 0


def leaves(tree, prefix=""):
    """Dotted paths of a YAML mapping's leaves (a non-empty mapping is descended into, anything else is a
    leaf: a scalar, a list, an empty mapping, an interpolation)."""
    out = []
    for key, value in tree.items():
        if key in ("defaults", "hydra", "_override_"):
            continue
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out += leaves(value, path + ".")
        else:
            out.append(path)
    return out


def merge(base, over):
    """OmegaConf's merge of `over` into `base`, with NeMo-RL's `_override_: true` replacing a mapping."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and value.get("_override_"):
            out[key] = {k: v for k, v in value.items() if k != "_override_"}
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def write(out_dir, engine, repo, git_dir, tag, name, sources, keys):
    commit = git(git_dir, "rev-list", "-n", "1", tag).strip()
    folder = os.path.join(out_dir, f"{engine}@{tag}")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{name}.keys"), "w") as f:
        f.write(f"# {engine} release {tag}: the keys/flags `{name}` accepts, one per line.\n")
        f.write(f"# repository: {repo}\n# tag: {tag}\n# commit: {commit}\n")
        for s in sources:
            f.write(f"# from: {s}\n")
        f.write(f"# made by: scripts/release_keys.py {engine} GIT_DIR {tag} tests/engines/releases\n")
        for k in sorted(set(keys)):
            f.write(k + "\n")


def verl(git_dir, tag, out_dir, repo):
    trees = {}
    for name in ("ppo_megatron_trainer", "ppo_trainer"):
        path = f"verl/trainer/config/_generated_{name}.yaml"
        trees[name] = yaml.safe_load(show(git_dir, tag, path))
        write(out_dir, "verl", repo, git_dir, tag, name, [path], leaves(trees[name]))
    # The fully_async recipe: a recipe directory before v0.8, verl/experimental after.
    for recipe in ("verl/experimental/fully_async_policy", "recipe/fully_async_policy"):
        if exists(git_dir, tag, f"{recipe}/fully_async_main.py"):
            break
    for name, base in (("fully_async_ppo_megatron_trainer", "ppo_megatron_trainer"),
                       ("fully_async_ppo_trainer", "ppo_trainer")):
        path = f"{recipe}/config/{name}.yaml"
        own = yaml.safe_load(show(git_dir, tag, path))
        defaults = [d for d in own.get("defaults", []) if d != "_self_"]
        assert defaults == [base], f"{path}: defaults {defaults}, expected [{base}]"
        write(out_dir, "verl", repo, git_dir, tag, name,
              [path, f"verl/trainer/config/_generated_{base}.yaml"], leaves(merge(trees[base], own)))


def openrlhf(git_dir, tag, out_dir, repo):
    path = "openrlhf/cli/train_ppo_ray.py"
    tree = ast.parse(show(git_dir, tag, path))
    flags = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        switch = any(k.arg == "action" and isinstance(k.value, ast.Constant) and k.value.value == "store_true"
                     for k in node.keywords)
        for a in node.args:
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--"):
                flags.append(a.value + (" switch" if switch else ""))
    write(out_dir, "openrlhf", repo, git_dir, tag, "train_ppo_ray", [path], flags)


def annotation_names(node):
    """The class names an annotation mentions (X, X | None, Optional[X], list[X], ...)."""
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)] + \
           [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def areal(git_dir, tag, out_dir, repo):
    path = "areal/api/cli_args.py"
    tree = ast.parse(show(git_dir, tag, path))
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def fields(name):
        c = classes[name]
        out = {}
        for b in c.bases:
            if isinstance(b, ast.Name) and b.id in classes:
                out.update(fields(b.id))
        for s in c.body:
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                if "ClassVar" in annotation_names(s.annotation):
                    continue
                out[s.target.id] = s.annotation
        return out

    def is_dataclass(name):
        return name in classes and any(
            (isinstance(d, ast.Name) and d.id == "dataclass") or
            (isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "dataclass")
            for d in classes[name].decorator_list)

    def keys(name, prefix, seen):
        out = []
        for field, annotation in fields(name).items():
            nested = [n for n in annotation_names(annotation) if is_dataclass(n)]
            # A list or dict of dataclasses is a value, not a tree of keys.
            container = any(n in ("list", "dict", "List", "Dict") for n in annotation_names(annotation))
            if nested and not container and nested[0] not in seen:
                out += keys(nested[0], f"{prefix}{field}.", seen | {nested[0]})
            else:
                out.append(prefix + field)
        return out

    for root in ("PPOConfig", "GRPOConfig"):
        write(out_dir, "areal", repo, git_dir, tag, root, [f"{path} ({root})"], keys(root, "", {root}))


def nemo_rl(git_dir, tag, out_dir, repo):
    def load(path):
        own = yaml.safe_load(show(git_dir, tag, path))
        parents = own.get("defaults")
        if not parents:
            return own, [path]
        base, files = {}, []
        for parent in [parents] if isinstance(parents, str) else parents:
            tree, more = load(os.path.join(os.path.dirname(path), parent))
            base, files = merge(base, tree), files + more
        return merge(base, own), files + [path]

    for name in ("grpo_math_1B", "grpo_math_1B_megatron"):
        tree, files = load(f"examples/configs/{name}.yaml")
        write(out_dir, "nemo-rl", repo, git_dir, tag, name, files, leaves(tree))


EXTRACT = {"verl": (verl, "verl-project/verl (volcengine/verl before its move)"),
           "openrlhf": (openrlhf, "OpenRLHF/OpenRLHF"),
           "areal": (areal, "areal-project/AReaL (inclusionAI/AReaL before its move)"),
           "nemo-rl": (nemo_rl, "NVIDIA-NeMo/RL")}

if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] not in EXTRACT:
        sys.exit(__doc__)
    engine, git_dir, tag, out_dir = sys.argv[1:]
    extract, repo = EXTRACT[engine]
    extract(git_dir, tag, out_dir, repo)
