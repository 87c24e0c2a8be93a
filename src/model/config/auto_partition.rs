//! `--partition auto`: the partition index and count from the environment of the
//! scheduler that started the process.
//!
//! Owns the table of schedulers and their variables, in the order they are looked for:
//! Slurm (`SLURM_PROCID`, `SLURM_NTASKS`), a Kubernetes Indexed Job
//! (`JOB_COMPLETION_INDEX`; the Job does not export its completion count, so N is
//! given), Open MPI (`OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`), PMI launchers
//! such as MPICH's and Intel MPI's (`PMI_RANK`, `PMI_SIZE`) and GNU parallel
//! (`PARALLEL_SEQ`, the job's sequence number from 1; N is given). Pure: the caller
//! passes the environment as a lookup, so tests inject maps. Called by the httperf
//! front end (`--partition=auto[/N]`) and by `rshperf sweep` (`--partition auto`,
//! `--partitions N`).

use thiserror::Error as ThisError;

/// Why `--partition auto` cannot name a partition.
#[derive(Debug, Clone, PartialEq, Eq, ThisError)]
pub enum AutoPartitionError {
    /// None of the schedulers' index variables is set.
    #[error(
        "--partition auto: no scheduler's partition index in the environment (looked for \
         SLURM_PROCID, JOB_COMPLETION_INDEX, OMPI_COMM_WORLD_RANK, PMI_RANK, PARALLEL_SEQ); \
         give --partition I/N"
    )]
    NoScheduler,
    /// The index variable is set, its count variable is not (nor given).
    #[error("--partition auto: {index} is set but {count} is not")]
    MissingCount {
        /// The index variable.
        index: &'static str,
        /// The count variable it needs.
        count: &'static str,
    },
    /// A scheduler that does not export the count, and no count was given.
    #[error(
        "--partition auto: {index} is set ({scheduler}) but the partition count is not \
         exported: give it ({how})"
    )]
    CountNeeded {
        /// The index variable.
        index: &'static str,
        /// Which scheduler sets it.
        scheduler: &'static str,
        /// How to give N.
        how: &'static str,
    },
    /// A variable that is not a decimal number.
    #[error("--partition auto: {var}={value} is not a decimal number")]
    NotANumber {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// An index out of range for the count.
    #[error("--partition auto: {index}={i} does not fit {n} partitions{from}")]
    OutOfRange {
        /// The index variable.
        index: &'static str,
        /// Its value.
        i: u64,
        /// The partition count.
        n: u64,
        /// Where the count came from (` (SLURM_NTASKS)`, or empty when given).
        from: String,
    },
    /// A given count that contradicts the scheduler's.
    #[error("--partition auto: {count}={env} but {given} partitions were given")]
    CountMismatch {
        /// The count variable.
        count: &'static str,
        /// Its value.
        env: u64,
        /// The count given on the command line.
        given: u32,
    },
    /// A count of 0 or more than 1,000,000 (`--partition`'s range).
    #[error("--partition auto: a partition count of {n} (expected 1 to 1000000)")]
    BadCount {
        /// The count.
        n: u64,
    },
}

/// One scheduler's variables.
struct Scheduler {
    /// Its name, for messages.
    name: &'static str,
    /// The index variable.
    index: &'static str,
    /// The count variable, when the scheduler exports one.
    count: Option<&'static str>,
    /// Whether the index counts from 1.
    one_based: bool,
    /// How to give the count when it is not exported.
    how: &'static str,
}

/// The schedulers, in the order their variables are looked for (a Slurm step may also
/// carry PMI variables; Slurm's own are the authority there).
const SCHEDULERS: [Scheduler; 5] = [
    Scheduler {
        name: "Slurm",
        index: "SLURM_PROCID",
        count: Some("SLURM_NTASKS"),
        one_based: false,
        how: "",
    },
    Scheduler {
        name: "a Kubernetes Indexed Job",
        index: "JOB_COMPLETION_INDEX",
        count: None,
        one_based: false,
        how: "--partition auto/N, N the Job's completions",
    },
    Scheduler {
        name: "Open MPI",
        index: "OMPI_COMM_WORLD_RANK",
        count: Some("OMPI_COMM_WORLD_SIZE"),
        one_based: false,
        how: "",
    },
    Scheduler {
        name: "a PMI launcher",
        index: "PMI_RANK",
        count: Some("PMI_SIZE"),
        one_based: false,
        how: "",
    },
    Scheduler {
        name: "GNU parallel",
        index: "PARALLEL_SEQ",
        count: None,
        one_based: true,
        how: "--partition auto/N, N the number of jobs",
    },
];

/// Highest partition count (`--partition`'s).
const MAX_PARTITIONS: u64 = 1_000_000;

/// (I, N) from the environment `env`; `given` is N from the command line, needed
/// where the scheduler does not export it and checked against it where it does.
pub(crate) fn resolve(
    env: &dyn Fn(&str) -> Option<String>,
    given: Option<u32>,
) -> Result<(u32, u32), AutoPartitionError> {
    let number = |var: &'static str, value: String| {
        let ok = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
        match value.parse::<u64>() {
            Ok(n) if ok => Ok(n),
            _ => Err(AutoPartitionError::NotANumber { var, value }),
        }
    };
    let Some((s, raw)) = SCHEDULERS.iter().find_map(|s| env(s.index).map(|v| (s, v))) else {
        return Err(AutoPartitionError::NoScheduler);
    };
    let index = number(s.index, raw)?;
    let (n, from) = match (s.count, given) {
        (Some(count), given) => {
            let n = match env(count) {
                Some(v) => number(count, v)?,
                None => {
                    return Err(AutoPartitionError::MissingCount {
                        index: s.index,
                        count,
                    })
                }
            };
            if let Some(g) = given.filter(|&g| u64::from(g) != n) {
                return Err(AutoPartitionError::CountMismatch {
                    count,
                    env: n,
                    given: g,
                });
            }
            (n, format!(" ({count})"))
        }
        (None, Some(g)) => (u64::from(g), String::new()),
        (None, None) => {
            return Err(AutoPartitionError::CountNeeded {
                index: s.index,
                scheduler: s.name,
                how: s.how,
            })
        }
    };
    if n == 0 || n > MAX_PARTITIONS {
        return Err(AutoPartitionError::BadCount { n });
    }
    let i = match (s.one_based, index) {
        (true, 0) => None,
        (true, k) => Some(k - 1),
        (false, k) => Some(k),
    };
    match i {
        Some(i) if i < n => Ok((
            u32::try_from(i).expect("below the count, at most 1,000,000"),
            u32::try_from(n).expect("at most 1,000,000"),
        )),
        _ => Err(AutoPartitionError::OutOfRange {
            index: s.index,
            i: index,
            n,
            from,
        }),
    }
}

/// The process's own environment, as `resolve` takes it.
pub(crate) fn process_env(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&str, &str)], given: Option<u32>) -> Result<(u32, u32), AutoPartitionError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        resolve(&|k| map.get(k).cloned(), given)
    }

    fn text(vars: &[(&str, &str)], given: Option<u32>) -> String {
        with(vars, given).expect_err("an error").to_string()
    }

    #[test]
    fn each_scheduler_names_its_partition() {
        let slurm = [("SLURM_PROCID", "2"), ("SLURM_NTASKS", "3")];
        assert_eq!(with(&slurm, None), Ok((2, 3)));
        assert_eq!(with(&slurm, Some(3)), Ok((2, 3)));
        assert_eq!(with(&[("JOB_COMPLETION_INDEX", "0")], Some(4)), Ok((0, 4)));
        let ompi = [("OMPI_COMM_WORLD_RANK", "5"), ("OMPI_COMM_WORLD_SIZE", "8")];
        assert_eq!(with(&ompi, None), Ok((5, 8)));
        let pmi = [("PMI_RANK", "0"), ("PMI_SIZE", "1")];
        assert_eq!(with(&pmi, None), Ok((0, 1)));
        // GNU parallel counts its jobs from 1.
        assert_eq!(with(&[("PARALLEL_SEQ", "1")], Some(2)), Ok((0, 2)));
        assert_eq!(with(&[("PARALLEL_SEQ", "2")], Some(2)), Ok((1, 2)));
    }

    #[test]
    fn slurm_wins_over_the_pmi_variables_of_its_own_step() {
        let vars = [
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "2"),
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "2"),
            ("PARALLEL_SEQ", "7"),
        ];
        assert_eq!(with(&vars, None), Ok((1, 2)));
    }

    #[test]
    fn missing_or_inconsistent_variables_are_named() {
        assert_eq!(
            text(&[], Some(2)),
            "--partition auto: no scheduler's partition index in the environment (looked for \
             SLURM_PROCID, JOB_COMPLETION_INDEX, OMPI_COMM_WORLD_RANK, PMI_RANK, \
             PARALLEL_SEQ); give --partition I/N"
        );
        assert_eq!(
            text(&[("SLURM_PROCID", "0")], None),
            "--partition auto: SLURM_PROCID is set but SLURM_NTASKS is not"
        );
        assert_eq!(
            text(&[("PMI_RANK", "1")], None),
            "--partition auto: PMI_RANK is set but PMI_SIZE is not"
        );
        assert_eq!(
            text(&[("JOB_COMPLETION_INDEX", "1")], None),
            "--partition auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but the \
             partition count is not exported: give it (--partition auto/N, N the Job's \
             completions)"
        );
        assert_eq!(
            text(&[("PARALLEL_SEQ", "3")], None),
            "--partition auto: PARALLEL_SEQ is set (GNU parallel) but the partition count is \
             not exported: give it (--partition auto/N, N the number of jobs)"
        );
        assert_eq!(
            text(&[("SLURM_PROCID", "3"), ("SLURM_NTASKS", "3")], None),
            "--partition auto: SLURM_PROCID=3 does not fit 3 partitions (SLURM_NTASKS)"
        );
        assert_eq!(
            text(&[("PARALLEL_SEQ", "3")], Some(2)),
            "--partition auto: PARALLEL_SEQ=3 does not fit 2 partitions"
        );
        assert_eq!(
            text(&[("PARALLEL_SEQ", "0")], Some(2)),
            "--partition auto: PARALLEL_SEQ=0 does not fit 2 partitions"
        );
        assert_eq!(
            text(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4")], Some(2)),
            "--partition auto: SLURM_NTASKS=4 but 2 partitions were given"
        );
        assert_eq!(
            text(&[("SLURM_PROCID", "x1"), ("SLURM_NTASKS", "4")], None),
            "--partition auto: SLURM_PROCID=x1 is not a decimal number"
        );
        assert_eq!(
            text(
                &[
                    ("OMPI_COMM_WORLD_RANK", "0"),
                    ("OMPI_COMM_WORLD_SIZE", "-2")
                ],
                None
            ),
            "--partition auto: OMPI_COMM_WORLD_SIZE=-2 is not a decimal number"
        );
        assert_eq!(
            text(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "0")], None),
            "--partition auto: a partition count of 0 (expected 1 to 1000000)"
        );
        assert_eq!(
            text(&[("JOB_COMPLETION_INDEX", "0")], Some(0)),
            "--partition auto: a partition count of 0 (expected 1 to 1000000)"
        );
    }
}
