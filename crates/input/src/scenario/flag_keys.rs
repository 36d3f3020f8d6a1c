//! Which scenario keys each command takes flags for (rows of `flags::FLAGS`): the command line
//! and the Python package's keyword overrides both ask here, so a flag means the same in both.

/// `compare` (and `sweep`): every key but those it does not read (the step is timed by
/// calibrated collectives; no engine run is bounded by memory; its seeds are `[compare] seeds`;
/// each compared fabric has its own loss, `[[compare.fabrics]] loss_rate` and `recovery`).
pub fn compare(key: &str) -> bool {
    key != "train.step_model"
        && key != "train.loss_rate"
        && key != "train.recovery"
        && key != "max_memory"
        && key != "seeds"
        && !key.starts_with("serve.")
}

/// `plan`: the cluster, fabric, topology, layout, cost and catalog.
pub fn plan(key: &str) -> bool {
    !key.starts_with("train.")
        && !key.starts_with("serve.")
        && !key.starts_with("compare.")
        && !key.starts_with("nccl.")
        && key != "engine"
        && key != "max_memory"
        && key != "seeds"
}

/// `train`: the cluster, fabric, topology and catalog, and the job.
pub fn train(key: &str) -> bool {
    job(key, "train.")
}

/// `serve`: the cluster, fabric, topology and catalog, and the deployment.
pub fn serve(key: &str) -> bool {
    job(key, "serve.")
}

/// A job command's keys: the cluster, fabric, topology, NCCL and catalog, the engine, memory
/// bound and seeds, and its own `section` (`train.`, `serve.`).
fn job(key: &str, section: &str) -> bool {
    ["cluster.", "fabric.", "topology.", section, "nccl."]
        .iter()
        .any(|p| key.starts_with(p))
        || key == "catalog"
        || key == "engine"
        || key == "max_memory"
        || key == "seeds"
}

/// `collective` and `tenants`: the cluster, fabric, topology, NCCL and catalog (a job's keys
/// without a section of its own: `nccl.` stands in for it).
pub fn cluster(key: &str) -> bool {
    job(key, "nccl.")
}

/// `sim` and `tune`: the network (cluster, fabric, topology, layout), NCCL's QPs, the catalog
/// and the engine.
pub fn sim(key: &str) -> bool {
    ["cluster.", "fabric.", "topology.", "layout.", "nccl."]
        .iter()
        .any(|p| key.starts_with(p))
        || key == "catalog"
        || key == "engine"
        || key == "max_memory"
}
