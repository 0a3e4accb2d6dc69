"""Import a submission folder under a unique, private package name.

A submission folder may be called anything (``builtins``, ``skeleton``,
``solution``...): its files are imported as ``_gradekit_sub<N>.<stem>``, so
they never shadow or are shadowed by an installed module. Inside the
submission, relative imports work, and absolute imports of the stubs' package
(``skeleton.X``: the name of the assignment's skeleton folder) or of a bare
sibling file name (``import attention``) are redirected to the submission's own
files by a per-module ``__import__``.

The same loader builds the 'isolated' variants (the student's code for one
task with the reference's code for every other contract name) and the
known-bug mutants (the reference with a source patch applied).

To the code it imports, the private package is an ordinary package of the
folder: it has a spec and a loader, so ``importlib.resources.files(__package__)``
(the folder's own files, and nothing else), ``importlib.util.find_spec``,
``pkgutil``, ``__spec__.parent``, ``importlib.import_module(".x", __package__)``,
``inspect.getsource`` and pickling by module name work as they would for
``mypkg/`` imported with ``import mypkg.attention``. With an ``__init__.py`` it
is a regular package whose ``__file__`` is that file; without one, a namespace
package (no ``__file__``). Either way the folder's ``__init__.py`` is never run:
each contract file is imported on its own, so that one broken file does not
take the others with it. Code given as source text (``patches``: the reference
parts of an isolated check, a mutant) has no source to show through its
loader, and the parts' folder (``PARTS_ROOT``) holds no file.
"""

import builtins
import importlib.abc
import importlib.machinery
import importlib.readers  # here, before a worker enters its jail: the package's resource reader
import importlib.util
import itertools
import sys
from pathlib import Path

from grader.errors import SubmissionError, from_exception, said

_counter = itertools.count()
PARTS_ROOT = Path("/nonexistent-gradekit-reference-parts")
"""Where reference parts loaded from source text claim to live: no such folder, so nothing is read from disk."""
_NEVER_REDIRECT = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "grader"}


class Namespace:
    """The contract's names as one folder of code provides them.

    Args:
        root: the folder holding the assignment's contract files (``attention.py`` etc.).
        assignment: the ``Assignment`` whose contract names and files are looked up.
        label: shown in messages (``"submission"``, ``"reference"``, a bug id).
        overrides: contract name -> object to put in place of the folder's own
            definition once its file has run (used for the 'isolated' variant).
        fallback: file name -> module to use when the folder's own file cannot
            be imported (used for the 'isolated' variant).
        patches: file name -> source text to use instead of the file on disk.
        block_reference: make importing the reference's package (``import solution``: the name of the
            assignment's reference folder) inside the code fail.
    """

    def __init__(
        self, root, *, assignment, label="submission", overrides=None, fallback=None, patches=None, block_reference=True
    ):
        self.root = Path(root).resolve()
        self.assignment = assignment
        self.label = label
        self.overrides = dict(overrides or {})
        self.fallback = dict(fallback or {})
        self.patches = dict(patches or {})
        self.block_reference = block_reference
        self._reference_package = Path(assignment.reference).name
        self._skeleton_package = Path(assignment.skeleton).name
        self.package = f"_gradekit_sub{next(_counter)}"
        self._modules = {}
        self._errors = {}
        self._twin = None
        self._install_package()

    # -- public -------------------------------------------------------------
    def get(self, name):
        """The object the folder defines for contract name ``name``; raises ``SubmissionError``."""
        if name in self.overrides:
            return self.overrides[name]
        file = self.assignment.name_to_file[name]
        module = self.module(file)
        try:
            return getattr(module, name)
        except AttributeError:
            raise SubmissionError(
                kind="missing_name", file=file, **said("say.missing_name", file=file, name=repr(name))
            ) from None

    def module(self, file):
        """Import (once) and return the module for contract file ``file``; raises ``SubmissionError``."""
        if file in self._errors:
            raise self._errors[file]
        if file not in self._modules:
            try:
                self._modules[file] = self._import(file[:-3])
            except SubmissionError as err:
                self._errors[file] = err
                raise
        return self._modules[file]

    def twin(self):
        """The same code imported once more, under a package name of its own (made once, on first use).

        Its modules, classes and whatever they keep between calls (a table cached in a dict or an ``lru_cache``)
        are not this namespace's: what is built from one is never seen by code built from the other. The
        probes build on the meta device from the twin (``probes.construct_on``), so that a meta tensor kept
        by the code never reaches a later build on the CPU. The overrides and fallbacks are the same objects.
        """
        if self._twin is None:
            self._twin = Namespace(
                self.root,
                assignment=self.assignment,
                label=self.label,
                overrides=self.overrides,
                fallback=self.fallback,
                patches=self.patches,
                block_reference=self.block_reference,
            )
        return self._twin

    def load_errors(self):
        """Try every contract file; return ``{file: SubmissionError}`` for those that fail."""
        for file in self.assignment.contract_files:
            try:
                self.module(file)
            except SubmissionError:
                pass
        return dict(self._errors)

    # -- machinery ----------------------------------------------------------
    def _install_package(self):
        init = self.root / "__init__.py"
        regular = init.is_file()  # a regular package has a file of its own; a namespace package has none
        origin = str(init) if regular else None
        spec = importlib.machinery.ModuleSpec(self.package, _PackageLoader(init), origin=origin, is_package=True)
        spec.submodule_search_locations = [str(self.root)]
        spec.has_location = regular
        pkg = importlib.util.module_from_spec(spec)  # __spec__, __loader__, __path__, __package__ (and __file__)
        sys.modules[self.package] = pkg
        self._pkg = pkg
        self._finder = _Finder(self)
        sys.meta_path.insert(0, self._finder)
        self._builtins = dict(vars(builtins))
        self._builtins["__import__"] = self._redirecting_import

    def _import(self, stem):
        name = f"{self.package}.{stem}"
        if stem + ".py" not in self.patches and not (self.root / f"{stem}.py").is_file():
            if stem + ".py" in self.fallback:
                return self.fallback[stem + ".py"]
            raise SubmissionError(
                kind="missing_file",
                file=f"{stem}.py",
                **said("say.missing_file", file=f"{stem}.py", folder=str(self.root)),
            )
        try:
            return importlib.import_module(name)
        except SubmissionError:
            raise
        except BaseException as exc:  # noqa: BLE001 - student code may raise anything, SystemExit included
            sys.modules.pop(name, None)
            if stem + ".py" in self.fallback:
                return self.fallback[stem + ".py"]
            raise from_exception(exc, self.root, kind="import_error") from None

    def _redirecting_import(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name:
            head, _, rest = name.partition(".")
            if head == self._reference_package and self.block_reference:
                raise ImportError("importing the reference solution is not allowed in a submission")
            if head == self._skeleton_package:
                module = importlib.import_module(self.package + ("." + rest if rest else ""))
                return _with_submodules(module, fromlist) if fromlist else self._pkg
            if head not in _NEVER_REDIRECT and self._is_local(head):
                module = importlib.import_module(f"{self.package}.{name}")
                if fromlist:
                    return _with_submodules(module, fromlist)
                return importlib.import_module(f"{self.package}.{head}")
        return builtins.__import__(name, globals, locals, fromlist, level)

    def _is_local(self, head):
        return (
            (self.root / f"{head}.py").is_file()
            or (self.root / head / "__init__.py").is_file()
            or f"{head}.py" in self.patches
        )

    def _exec(self, module, stem, path):
        module.__dict__["__builtins__"] = self._builtins
        fallback = self.fallback.get(stem + ".py")
        try:
            source = self.patches.get(stem + ".py")
            if source is None:
                source = path.read_text(encoding="utf-8")
            code = compile(source, str(path), "exec", dont_inherit=True)
            exec(code, module.__dict__)  # noqa: S102 - running the student's code is the point
        except BaseException:  # noqa: BLE001 - with a fallback, a broken file is replaced, whatever it raised
            if fallback is None:
                raise
            module.__dict__.update({k: v for k, v in vars(fallback).items() if not k.startswith("__")})
        for name, obj in self.overrides.items():
            if self.assignment.name_to_file.get(name) == stem + ".py":
                setattr(module, name, obj)


def _with_submodules(module, fromlist):
    """``module``, with the submodules ``from package import a, b`` names imported, as ``__import__`` does for a
    package (``from skeleton import masks`` then finds the submission's ``masks.py``); a name that is no
    submodule is left for the ``from`` statement to find or to refuse, as it would be."""
    if hasattr(module, "__path__"):
        for item in fromlist:
            if item != "*" and not hasattr(module, item):
                try:
                    importlib.import_module(f"{module.__name__}.{item}")
                except ModuleNotFoundError as exc:
                    if exc.name != f"{module.__name__}.{item}":
                        raise
    return module


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, ns):
        self.ns = ns

    def find_spec(self, fullname, path=None, target=None):
        prefix = self.ns.package + "."
        if not fullname.startswith(prefix):
            return None
        rest = fullname[len(prefix) :]
        stem = rest.replace(".", "/")
        file = self.ns.root / f"{stem}.py"
        if file.is_file() or f"{rest}.py" in self.ns.patches or f"{rest}.py" in self.ns.fallback:
            return importlib.util.spec_from_file_location(fullname, file, loader=_Loader(self.ns, rest, file))
        init = self.ns.root / stem / "__init__.py"
        if init.is_file():
            return importlib.util.spec_from_file_location(
                fullname,
                init,
                loader=_Loader(self.ns, rest + "/__init__", init),
                submodule_search_locations=[str(init.parent)],
            )
        return None


class _FileLoaderBasics(importlib.abc.Loader):
    """What a file system package's loader offers besides running code: its file, its folder's files
    (``importlib.resources``) and ``get_data`` (``pkgutil.get_data``), read as any ``open`` in that code would."""

    def __init__(self, path):
        self.path = path

    def create_module(self, spec):
        return None

    def get_filename(self, fullname=None):
        return str(self.path)

    def get_data(self, path):
        with open(path, "rb") as f:
            return f.read()

    def get_resource_reader(self, fullname=None):
        return importlib.readers.FileReader(self)  # the folder of self.path


class _PackageLoader(_FileLoaderBasics):
    """The private package's loader: the folder's ``__init__.py`` is never run (see the module's docstring)."""

    def is_package(self, fullname=None):
        return True

    def get_source(self, fullname=None):
        return None

    def exec_module(self, module):
        pass


class _Loader(_FileLoaderBasics):
    def __init__(self, ns, stem, path):
        super().__init__(path)
        self.ns, self.stem = ns, stem

    def is_package(self, fullname=None):
        return self.stem.endswith("/__init__")

    def get_source(self, fullname=None):
        """The file's text, as ``inspect`` would read it; ``None`` for code given as source text (a reference part,
        a mutant), which no submission is shown."""
        if self.stem + ".py" in self.ns.patches or not Path(self.path).is_file():
            return None
        return importlib.util.decode_source(self.get_data(self.path))

    def exec_module(self, module):
        self.ns._exec(module, self.stem, self.path)
