"""The pipesim Python module (python/README.md), run by ctest as python.pytest.

Skips, not fails, where the module was not built (no pybind11): the import is the first
thing each test needs.
"""
import os
import re
import pathlib

import pytest

pipesim = pytest.importorskip("pipesim")
np = pytest.importorskip("numpy")

DATA = pathlib.Path(os.environ.get("PIPESIM_TEST_DATA", pathlib.Path(__file__).parents[2] / "tests" / "data"))
REPO = DATA.parents[1]


def unit_costs():
    """F = I = W = 1 us per full stage, free links."""
    return pipesim.UniformCosts(fwd="1us", bwd="2us", wgrad="1us")


def test_generators_are_listed_with_their_summaries():
    names = [name for name, _ in pipesim.generators()]
    for name in ("gpipe", "1f1b", "interleaved", "zb-h1", "dualpipev", "looped-bfs", "interleaved-zb", "zb-v"):
        assert name in names
    assert all(summary for _, summary in pipesim.generators())


def test_schedule_object():
    s = pipesim.generate("interleaved", p=2, m=4, v=2)
    assert (s.num_devices, s.num_stages, s.microbatches, s.chunks_per_device) == (2, 4, 4, 2)
    assert s.placement == [[0, 1, 0, 1]]
    assert s.ops[0][:4] == ["0F0", "0F1", "2F0", "2F1"]
    assert s.total_ops == sum(len(row) for row in s.ops)
    assert "interleaved" in repr(s)


@pytest.mark.parametrize("p,m", [(2, 2), (4, 8), (8, 3)])
def test_1f1b_makespan_is_the_closed_form(p, m):
    r = pipesim.simulate(pipesim.generate("1f1b", p=p, m=m), pipesim.UniformCosts(fwd="1ms", bwd="2ms"))
    assert r.makespan_ns == (m + p - 1) * 3_000_000
    assert r.makespan_s == pytest.approx((m + p - 1) * 3e-3)
    assert r.metrics["bubble_ratio"] == pytest.approx((p - 1) / (m + p - 1))


def test_zb_v_published_figures():
    assert pipesim.simulate(pipesim.generate("zb-v", p=4, m=8), unit_costs()).makespan_ns == 25_500
    assert pipesim.simulate(pipesim.generate("zb-v", p=8, m=32), unit_costs()).makespan_ns == 99_500


def test_per_op_records_are_numpy_arrays():
    s = pipesim.generate("zb-h1", p=4, m=8)
    r = pipesim.simulate(s, unit_costs())
    ops = r.ops
    assert isinstance(ops, np.ndarray)
    assert len(ops) == s.total_ops
    assert set(ops.dtype.names) >= {"device", "index", "stage", "microbatch", "start_ns", "end_ns", "kind"}
    assert (ops["end_ns"] >= ops["start_ns"]).all()
    assert ops["end_ns"].max() == r.makespan_ns
    # Device 0's records in list order: each starts after the previous one ended.
    d0 = np.sort(ops[ops["device"] == 0], order="index")
    assert (d0["start_ns"][1:] >= d0["end_ns"][:-1]).all()
    assert set(ops["kind"]) == {b"F", b"I", b"W", b"OPT"}
    busy = (ops["end_ns"] - ops["start_ns"])[ops["device"] == 0].sum()
    assert busy == r.devices[0]["busy_s"] * 1e9
    assert len(r.transfers) == 2 * 3 * 8  # each way, 3 boundaries, 8 micro-batches
    assert r.critical_path[0].startswith("0F0@0")


def test_memory_records():
    r = pipesim.simulate(pipesim.generate("gpipe", p=2, m=3), pipesim.UniformCosts(activation_bytes="1MiB"))
    mem = r.memory
    assert mem["activations"].max() == 3
    assert mem["bytes"].max() == 3 << 20
    assert r.devices[0]["peak_activations"] == 3


def test_pytorch_files_both_ways():
    path = DATA / "pytorch" / "dualpipev_4rank_10mb.csv"
    s = pipesim.read_schedule(str(path))
    assert s.to_pytorch() == path.read_text()
    comms = (DATA / "pytorch" / "zb1p_2rank_2stagep_comms.csv").read_text()
    assert pipesim.parse_schedule(comms, name="comms.csv").to_pytorch(comms=True) == comms
    lowered = pipesim.generate("1f1b", p=2, m=3).to_pytorch(comms=True)
    assert lowered.splitlines()[0].startswith("0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0")


def test_send_recv_lowering_costs_nothing_on_free_links():
    s = pipesim.generate("interleaved", p=4, m=8, v=2)
    low = pipesim.add_send_recv(s)
    assert any("SEND_F" in op for op in low.ops[0])
    assert pipesim.simulate(low, unit_costs()).makespan_ns == pipesim.simulate(s, unit_costs()).makespan_ns


def test_validation_lists_every_problem_and_the_cycle():
    bad = pipesim.parse_schedule("0F0,0RECV_B0,0B0,0SEND_F0\n1RECV_F0,1F0,1B0,1SEND_B0\n", name="dead.csv")
    v = pipesim.validate(bad)
    assert not v["ok"]
    assert v["errors"][-1].startswith("deadlock: ")
    assert any("0RECV_B0 (device 0)" in step for step in v["cycle"])
    good = pipesim.validate(pipesim.generate("1f1b", p=4, m=8), unit_costs())
    assert good["ok"] and good["errors"] == []
    assert good["critical_path_s"] == pytest.approx(11 * 3e-6)
    with pytest.raises(pipesim.InputError, match="deadlock: 2 device"):
        pipesim.simulate(bad)


def test_compare_and_the_other_cost_models():
    results = pipesim.compare([pipesim.generate(n, p=4, m=8) for n in ("1f1b", "zb-h1")], unit_costs())
    assert [r.schedule.name for r in results] == ["1f1b", "zb-h1"]
    assert results[1].makespan_ns < results[0].makespan_ns
    analytical = pipesim.simulate(pipesim.generate("1f1b", p=4, m=8), pipesim.AnalyticalCosts("gpt3-1.3b", tp=2))
    assert analytical.makespan_s > 0
    profile = REPO / "docs" / "validation" / "gpt-small-cpu-profile.json"
    profiled = pipesim.simulate(pipesim.generate("1f1b", p=2, m=4), pipesim.ProfiledCosts(str(profile)))
    assert profiled.makespan_s > 0


def test_catalogs():
    assert "gpt3-1.3b" in [m["name"] for m in pipesim.models()]
    assert "h100-sxm" in [g["name"] for g in pipesim.gpus()]
    assert all(link["bandwidth"] > 0 for link in pipesim.links())


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pipesim.generate("2f2b"), "unknown schedule '2f2b' (known: gpipe"),
        (lambda: pipesim.generate("interleaved", p=4, m=9), "m (9) must be a multiple of its number of rounds"),
        (lambda: pipesim.UniformCosts(fwd="1parsec"), "fwd"),
        (lambda: pipesim.read_schedule("/nonexistent/x.csv"), "cannot read schedule file '/nonexistent/x.csv'"),
        (lambda: pipesim.parse_schedule("0F0,0X0\n", name="k.csv"), "k.csv:1: cell 2: '0X0': unknown op kind"),
        (lambda: pipesim.parse_schedule("{}", format="yaml"), 'format: expected "csv" or "json"'),
        (lambda: pipesim.generate("chimera", p=4, m=4).to_pytorch(), "PyTorch pipelining runs one pipeline"),
        (lambda: pipesim.AnalyticalCosts("no-such-model"), "no-such-model"),
        (lambda: pipesim.generate("1f1b", pipelines=4), "pipelines: not a setting of 1f1b (it is one of chimera)"),
        (lambda: pipesim.generate("chimera", no_such=1), "unknown keyword argument 'no_such' (settings: pipelines"),
        (lambda: pipesim.generate("chimera", concat=2), "concat: expected direct, doubling or halving, got 2"),
        (lambda: pipesim.generate("amp", max_active_keys=2**40), "max_active_keys: expected an integer"),
        (lambda: pipesim.generate("chimera", concat="tripling"), "chimera: concat must be direct, doubling or halving"),
    ],
)
def test_bad_input_is_an_input_error_with_the_clis_message(call, message):
    with pytest.raises(pipesim.InputError) as err:
        call()
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert isinstance(err.value, ValueError)


def test_family_settings_are_keyword_arguments():
    halving = pipesim.generate("chimera", p=4, m=4, concat="halving")
    assert halving.total_ops > pipesim.generate("chimera", p=4, m=4).total_ops
    assert pipesim.generate("amp", p=4, m=4, max_active_keys=1).ops != pipesim.generate("amp", p=4, m=4).ops


def test_readme_example_runs():
    readme = pathlib.Path(os.environ.get("PIPESIM_README", REPO / "README.md")).read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "README.md has a ```python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
