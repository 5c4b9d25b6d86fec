"""The configuration fragments. "distro" is Debian's full 6.1 config plus
configs/distro.config, for packages on real machines; nothing here builds
it (hours on two cores), but configuring it shows whether Kconfig keeps
every scheduler option the series adds on top of Debian's choices (core
scheduling, for one, would switch ULE, BMQ and MuQSS off)."""

from schedlab import build, paths

# What the series adds that a package must carry; base.config builds the
# same set for the guests.
SERIES_OPTIONS = ["CONFIG_SCHED_ULE", "CONFIG_SCHED_BMQ", "CONFIG_SCHED_MUQSS",
                  "CONFIG_SCHED_EVENTS", "CONFIG_SCHED_SANITY", "CONFIG_SCHED_DEFAULT_CFS"]


def fragment(name):
    return build.parse_fragment(paths.REPO / "configs" / name)


def test_distro_asks_for_what_the_guests_run():
    base, distro = fragment("base.config"), fragment("distro.config")
    assert {k: distro.get(k) for k in SERIES_OPTIONS} == {k: base.get(k) for k in SERIES_OPTIONS}
    assert "CONFIG_SCHED_CORE" in distro and distro["CONFIG_SCHED_CORE"] is None


def test_distro_config_keeps_the_scheduler_options():
    """configure() raises when Kconfig drops a fragment's setting."""
    build.configure("distro", log=lambda *a: None)
    have = build.read_config(paths.obj_dir("distro") / ".config")
    assert all(have.get(k) == "y" for k in SERIES_OPTIONS), \
        {k: have.get(k) for k in SERIES_OPTIONS}
    assert "CONFIG_SCHED_CORE" not in have


def test_distro_small_has_no_modules_and_boots_the_guests():
    """distro-small: Debian's choices with every module off, the guests'
    drivers built in and no debug information; the series' options as in
    distro."""
    build.configure("distro-small", log=lambda *a: None)
    have = build.read_config(paths.obj_dir("distro-small") / ".config")
    assert all(have.get(k) == "y" for k in SERIES_OPTIONS)
    assert [k for k, v in have.items() if v == "m"] == []
    for guest_needs in ("CONFIG_VIRTIO_PCI", "CONFIG_NET_9P_VIRTIO", "CONFIG_9P_FS",
                        "CONFIG_SERIAL_8250_CONSOLE"):
        assert have.get(guest_needs) == "y", guest_needs
    assert "CONFIG_DEBUG_INFO" not in have
    # Still Debian's kernel otherwise: its preemption model and CPU count.
    build.configure("distro", log=lambda *a: None)
    debian = build.read_config(paths.obj_dir("distro") / ".config")
    for key in ("CONFIG_NR_CPUS", "CONFIG_PREEMPT_DYNAMIC", "CONFIG_HZ", "CONFIG_NUMA"):
        assert have.get(key) == debian.get(key), key
    assert "distro-small" in build.BOOTABLE and "distro" not in build.BOOTABLE
