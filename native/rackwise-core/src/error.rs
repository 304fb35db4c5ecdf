//! Errors the core reports to its caller. The JNI layer maps each kind to its own Java
//! exception class, so the kind is part of the contract.

use std::fmt;

/// One thing wrong with a configuration: which element or key, the value found, and why it
/// was refused. Operators see these verbatim in the ResourceManager log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    pub element: String,
    pub value: String,
    pub reason: String,
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: value '{}' {}",
            self.element, self.value, self.reason
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum CoreError {
    /// The configuration was refused; every problem found is listed, not only the first.
    Config(Vec<ConfigProblem>),
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::Config(problems) => {
                write!(f, "invalid Rackwise configuration")?;
                for problem in problems {
                    write!(f, "; {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for CoreError {}
