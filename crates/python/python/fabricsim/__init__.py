"""fabricsim: plan, simulate and compare AI training fabrics from Python.

Each call takes a scenario (a path, TOML text, a dict, or None for the command's defaults) and
keyword overrides named as the CLI's flags (``gpus=256`` is ``--gpus 256``, ``fabric=...`` is
``--fabric``), and returns the dict parsed from the JSON the CLI writes for the same scenario
and seed; the ``*_json`` forms return that text itself, byte for byte. Bad input raises
``InputError`` (a ``ValueError``) with ``file``, ``line``, ``key``, ``value``, ``problem`` and
``allowed``; a failed run raises ``RunError``. Runs release the GIL; Ctrl-C stops them.

The ``*_frame`` forms return a result table as a pandas DataFrame (through Arrow: the native
module writes an Arrow IPC stream, pyarrow reads it), with the CSV output's column names and
units: ``sim_frame`` each message (or the port series), ``sweep_frame`` each point,
``collective_frame`` each size. They need pyarrow and pandas.
"""

import json
import os

from . import _fabricsim
from ._fabricsim import InputError, RunError

__all__ = [
    "InputError",
    "RunError",
    "collective",
    "collective_frame",
    "collective_json",
    "compare",
    "compare_json",
    "plan",
    "plan_json",
    "sim",
    "sim_frame",
    "sim_json",
    "sweep",
    "sweep_frame",
    "sweep_json",
    "train",
    "train_json",
]


def _scenario(scenario):
    """(kind, text): a path, TOML text (a string with a newline or '='), a dict, or none."""
    if scenario is None:
        return "none", ""
    if isinstance(scenario, dict):
        return "json", json.dumps(scenario)
    if isinstance(scenario, os.PathLike):
        return "path", os.fspath(scenario)
    if isinstance(scenario, str):
        if "\n" in scenario or "=" in scenario:
            return "toml", scenario
        return "path", scenario
    raise TypeError(
        f"scenario: {type(scenario).__name__} given; a path, TOML text, a dict or None allowed"
    )


def _value(v):
    """A keyword's value as the CLI flag's text: bools lower-case, lists comma-separated."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(_value(x) for x in v)
    return str(v)


def _flags(overrides):
    return [("--" + k.replace("_", "-"), _value(v)) for k, v in overrides.items()]


def plan_json(scenario=None, **overrides):
    """``fabricsim plan --format json``'s text."""
    return _fabricsim.plan(*_scenario(scenario), _flags(overrides))


def plan(scenario=None, **overrides):
    """The fabric's bill of materials, power and cost, as a dict."""
    return json.loads(plan_json(scenario, **overrides))


def sim_json(scenario, *, seed=None, until=None, **overrides):
    """``fabricsim sim SCENARIO --out FILE``'s text (``seed`` is ``--seed``, ``until`` ``--until``)."""
    return _fabricsim.sim(*_scenario(scenario), _flags(overrides), seed, until)


def sim(scenario, *, seed=None, until=None, **overrides):
    """A packet- or flow-engine run of the scenario's traffic, as a dict."""
    return json.loads(sim_json(scenario, seed=seed, until=until, **overrides))


def train_json(scenario=None, *, calibrate=False, **overrides):
    """``fabricsim train --format json``'s text (``calibrate=True`` is ``--calibrate``)."""
    return _fabricsim.train(*_scenario(scenario), _flags(overrides), calibrate)


def train(scenario=None, *, calibrate=False, **overrides):
    """A training step: its time, MFU and each collective's time, exposed and hidden, as a dict."""
    return json.loads(train_json(scenario, calibrate=calibrate, **overrides))


def compare_json(scenario=None, **overrides):
    """``fabricsim compare --format json``'s text (``fabric`` may be a list of profile ids)."""
    return _fabricsim.compare(*_scenario(scenario), _flags(overrides))


def compare(scenario=None, **overrides):
    """The same cluster and step on each fabric with a recommendation, as a dict."""
    return json.loads(compare_json(scenario, **overrides))


def collective_json(scenario=None, **overrides):
    """``fabricsim collective --format json``'s text (``op``, ``min_bytes``, ``max_bytes``,
    ``algo``, ``fit=True``, ... as the CLI's flags, beside the cluster's)."""
    return _fabricsim.collective(*_scenario(scenario), _flags(overrides))


def collective(scenario=None, **overrides):
    """An NCCL collective over an nccl-tests size sweep: its table (time, algbw, busbw per
    size, each over the seeds) and with ``fit=True`` the alpha-beta fit, as a dict."""
    return json.loads(collective_json(scenario, **overrides))


def _params(param):
    """``param`` as ``--param`` pairs: one ``"NAME=V1,V2"`` string or a list of them."""
    if isinstance(param, str):
        param = [param]
    return [("--param", p) for p in param]


def sweep_json(scenario=None, *, param=(), **overrides):
    """``fabricsim sweep --json FILE``'s text: ``param`` is ``--param`` (``"loss_rate=0,0.001"``
    or a list of two), with ``fabric``, ``seed``, ``seeds``, ``engine`` and ``threads``."""
    return _fabricsim.sweep(*_scenario(scenario), _params(param) + _flags(overrides))


def sweep(scenario=None, *, param=(), **overrides):
    """Each sweep point's training step (step time, MFU, stress figures over the seeds), as a dict."""
    return json.loads(sweep_json(scenario, param=param, **overrides))


def _frame(ipc_stream):
    """A pandas DataFrame from Arrow IPC stream bytes."""
    try:
        import pyarrow
    except ImportError as e:
        raise ImportError("the *_frame calls need pyarrow and pandas: pip install pyarrow pandas") from e
    return pyarrow.ipc.open_stream(ipc_stream).read_all().to_pandas()


def sim_frame(scenario, *, table="messages", seed=None, until=None, **overrides):
    """A sim run's table as a DataFrame: ``table="messages"`` (``sim --format csv``'s columns:
    id, qp, class, src, dst, bytes, start_ps, recv_ps, finish_ps, fct_ps, ideal_fct_ps) or
    ``"series"`` (``sim --series``'s: port, node, time_ps, queue_bytes, tx_bytes)."""
    return _frame(_fabricsim.sim_table(*_scenario(scenario), _flags(overrides), seed, until, table))


def collective_frame(scenario=None, **overrides):
    """The collective's rows as a DataFrame (size_bytes, time_us, algbw_GBps, busbw_GBps, ...,
    each estimate with its 95% interval as ``_lo``/``_hi``)."""
    return _frame(_fabricsim.collective_table(*_scenario(scenario), _flags(overrides)))


def sweep_frame(scenario=None, *, param=(), **overrides):
    """The sweep's points as a DataFrame, with ``sweep --csv``'s columns."""
    return _frame(_fabricsim.sweep_table(*_scenario(scenario), _params(param) + _flags(overrides)))
