"""The optional compiled build. Everything else about the package is in pyproject.toml.

By default this is a plain pure-Python build: `make run`, `pip install -e .` and
`make test` use the sources as they are. With AUTOGRAD_LAB_COMPILE=1 the hot modules
below are compiled to C with mypyc (the same typed sources, type-checked by mypy with
the settings in pyproject.toml) for `make compiled` and the Docker image. That needs
mypy (the `test` extra) and a C compiler in the building environment, so it is run with
`pip ... --no-build-isolation`; if anything fails the build fails, there is no fallback
to pure Python.

A compiled build always goes out of the source tree (`pip install --target`, `pip
wheel`): an in-place build (`pip install -e .`, `build_ext --inplace`) would leave .so
files beside the sources that shadow later edits, so it is refused.
"""

from __future__ import annotations

import glob
import os
import sys

from setuptools import Extension, setup

COMPILED = [
    "engine/*.py",
    "engine/functions/*.py",
    "app/language/*.py",
    "app/trace/build.py",
    "app/trace/pieces.py",
    "app/trace/kept.py",
    "app/trace/lenses.py",
    "app/trace/layout.py",
    "app/trace/layered.py",
    "app/trace/placement.py",
    "app/trace/bands.py",
    "app/trace/values.py",
    "app/trace/profile.py",     # the two lenses see every event of the run: compiled,
    "app/trace/callpath.py",    # they took a tenth of the 1,000-step loop's trace
    # Pure Python, always: app/trace/document.py (pydantic models; mypyc emits C for
    # them that does not build), app/limits.py (app/web/settings.py reads its fields as
    # class attributes), and the server and command-line modules (not hot).
]
# Matched above but left pure: a subclass of tuple, which mypyc cannot compile.
PURE = {"app/language/size.py"}
# Kernels written in C beside the Python that defines them and that the pure build runs
# (each module's Note says why, what it measured, and which test holds the two to each
# other: engine/functions/softmax_kernel.py, Note [The kernels in C]; engine/optim.py,
# Note [Adam in C]; engine/functions/chains.py, summation.py and nll_sums.py;
# engine/printing.py and normal_kernel.py). No contraction of a * b + c into a fused
# multiply-add but where the C asks for one (fmaf).
C_KERNELS = {"engine.functions.sleef_kernels": "engine/functions/sleef_kernels.c",
             "engine.functions.chain_kernels": "engine/functions/chain_kernels.c",
             "engine.functions.nll_kernels": "engine/functions/nll_kernels.c",
             "engine.functions.sum_kernels": "engine/functions/sum_kernels.c",
             "engine.printing_kernels": "engine/printing_kernels.c",
             "engine.normal_kernels": "engine/normal_kernels.c",
             "engine.optim_kernels": "engine/optim_kernels.c"}
C_FLAGS = ["-O2", "-ffp-contract=off", "-fno-fast-math"]

# pip asks the backend for requirements (egg_info) and metadata (dist_info) before it
# asks for the wheel; only building the wheel needs mypyc to run.
BUILDING = {"bdist_wheel", "build", "build_ext", "install"}
IN_PLACE = {"editable_wheel", "develop", "--inplace", "-i"}


def ext_modules() -> list[object]:
    if os.environ.get("AUTOGRAD_LAB_COMPILE", "") != "1":
        return []
    if IN_PLACE & set(sys.argv):
        sys.exit("autograd-lab: AUTOGRAD_LAB_COMPILE=1 builds out of the source tree only "
                 "(`make compiled`); an in-place build would leave .so files that shadow "
                 "the sources")
    if not BUILDING & set(sys.argv):
        return []
    from mypyc.build import mypycify  # ImportError: mypy is missing, and the build fails

    paths = sorted(path for pattern in COMPILED for path in glob.glob(pattern)
                   if path not in PURE)
    print(f"autograd-lab: compiling {len(paths)} modules with mypyc", file=sys.stderr)
    kernels = [Extension(name, [source], extra_compile_args=C_FLAGS,
                         depends=["engine/kernel_buffers.h"])
               for name, source in C_KERNELS.items()]
    return [*mypycify(paths, opt_level="3", group_name="autograd_lab",
                      target_dir="build/mypyc"), *kernels]


setup(
    ext_modules=ext_modules(),
    # setuptools' own build directories, apart from build/compiled (see the Makefile).
    options={"build": {"build_base": "build/setuptools"}},
)
