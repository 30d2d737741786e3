pub mod dev;
pub mod health;
