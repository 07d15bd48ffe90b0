//! The governor's limit under a 429 storm, its pauses and pacing, and what a task is (not)
//! charged, on tokio's paused clock.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::model::ratelimit::{Bucket, RateLimitHeaders};

fn token() -> CancellationToken {
    CancellationToken::new()
}

#[tokio::test(start_paused = true)]
async fn a_429_storm_halves_the_limit_once_per_round_and_successes_raise_it() {
    let g = Arc::new(Governor::new(16, true));
    let t = token();
    tokio::time::advance(Duration::from_millis(1)).await;
    // 16 requests in flight, every one of them answered 429: one decrease for the round.
    let mut permits = Vec::new();
    for _ in 0..16 {
        permits.push(g.acquire(&t).await.unwrap().0);
    }
    for p in permits {
        p.rate_limited(None);
    }
    assert_eq!(g.snapshot().limit, 8);
    assert_eq!(g.snapshot().rate_limited, 16);
    // Each later round that is all 429s halves it again, down to 1 and no further.
    for want in [4, 2, 1, 1] {
        let n = g.snapshot().limit;
        tokio::time::advance(Duration::from_millis(1)).await;
        let mut permits = Vec::new();
        for _ in 0..n {
            permits.push(g.acquire(&t).await.unwrap().0);
        }
        tokio::time::advance(Duration::from_millis(1)).await;
        for p in permits {
            p.rate_limited(None);
        }
        assert_eq!(g.snapshot().limit, want);
    }
    assert_eq!(g.snapshot().min_limit, 1);
    // Additive increase: a whole limit's worth of successes adds one.
    for want in [2, 3, 4] {
        let n = g.snapshot().limit;
        for _ in 0..n {
            g.acquire(&t).await.unwrap().0.succeeded();
        }
        assert_eq!(g.snapshot().limit, want);
    }
    // A 529 lowers it too (to half the requests in flight).
    tokio::time::advance(Duration::from_millis(1)).await;
    let (a, b) = (
        g.acquire(&t).await.unwrap().0,
        g.acquire(&t).await.unwrap().0,
    );
    a.overloaded();
    drop(b);
    assert_eq!(g.snapshot().limit, 1);
    assert_eq!(g.snapshot().overloaded, 1);
}

#[tokio::test(start_paused = true)]
async fn the_limit_holds_requests_back_until_one_ends() {
    let g = Arc::new(Governor::new(2, true));
    let t = token();
    let a = g.acquire(&t).await.unwrap().0;
    let _b = g.acquire(&t).await.unwrap().0;
    let g2 = g.clone();
    let third = tokio::spawn(async move {
        let t0 = Instant::now();
        let (_p, waited) = g2.acquire(&CancellationToken::new()).await.unwrap();
        (t0.elapsed(), waited)
    });
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        !third.is_finished(),
        "a third request waits while two are in flight"
    );
    drop(a);
    let (elapsed, waited) = third.await.unwrap();
    assert_eq!(elapsed, Duration::from_secs(3));
    assert_eq!(waited, Duration::from_secs(3));
    assert_eq!(g.snapshot().waits, 1);
    // Switched off, there is no limit.
    let off = Arc::new(Governor::new(1, false));
    let _x = off.acquire(&t).await.unwrap();
    let _y = off.acquire(&t).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn retry_after_holds_back_every_task() {
    let g = Arc::new(Governor::new(8, true));
    let t = token();
    tokio::time::advance(Duration::from_millis(1)).await;
    let _held: Vec<_> = vec![
        g.acquire(&t).await.unwrap().0,
        g.acquire(&t).await.unwrap().0,
    ];
    let p = g.acquire(&t).await.unwrap().0;
    p.rate_limited(Some(Duration::from_secs(2)));
    drop(_held);
    // Another task's request waits out the pause, though it never got a 429.
    let other = TaskGovernor::new(g.clone());
    let t0 = Instant::now();
    let _p = other.acquire(&t).await.unwrap();
    assert_eq!(t0.elapsed(), Duration::from_secs(2));
    let tally = other.tally();
    assert_eq!(
        (tally.waits, tally.wait_ms, tally.rate_limited),
        (1, 2000, 0)
    );
    assert_eq!(tally.limit, 1, "half of the 3 requests in flight");
    // A cancelled wait ends at once.
    g.pause(Duration::from_secs(60));
    let cancelled = token();
    cancelled.cancel();
    assert!(other.acquire(&cancelled).await.is_none());
}

#[tokio::test(start_paused = true)]
async fn a_low_requests_bucket_paces_starts_at_its_refill_rate() {
    let g = Arc::new(Governor::new(8, true));
    let t = token();
    let low = RateLimitHeaders {
        requests: Bucket {
            limit: Some(120),
            remaining: Some(0),
            reset: Some(Duration::from_secs(30)),
        },
        ..RateLimitHeaders::default()
    };
    let p = g.acquire(&t).await.unwrap().0;
    p.headers(&low);
    p.succeeded();
    // 120 a minute: one start every 500 ms (and 3 %) from the first.
    let t0 = Instant::now();
    let mut starts = Vec::new();
    for _ in 0..4 {
        let p = g.acquire(&t).await.unwrap().0;
        starts.push(t0.elapsed().as_millis());
        p.headers(&low);
        p.succeeded();
    }
    assert_eq!(starts, vec![515, 1030, 1545, 2060]);
    // A bucket with room again lifts the pace.
    let full = RateLimitHeaders {
        requests: Bucket {
            remaining: Some(100),
            ..low.requests
        },
        ..low
    };
    let p = g.acquire(&t).await.unwrap().0;
    p.headers(&full);
    drop(p);
    let t1 = Instant::now();
    for _ in 0..4 {
        drop(g.acquire(&t).await.unwrap());
    }
    assert_eq!(t1.elapsed(), Duration::ZERO);
    // An exhausted token limit pauses everyone until it resets (at most 10 s).
    let tokens = RateLimitHeaders {
        tokens: Bucket {
            limit: Some(1000),
            remaining: Some(0),
            reset: Some(Duration::from_secs(3)),
        },
        ..RateLimitHeaders::default()
    };
    g.acquire(&t).await.unwrap().0.headers(&tokens);
    let t2 = Instant::now();
    drop(g.acquire(&t).await.unwrap());
    assert_eq!(t2.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn the_time_limit_leaves_governor_waits_out() {
    let task = TaskGovernor::solo();
    let t = token();
    let credit = task.credit();
    let limit = tokio::spawn({
        let credit = credit.clone();
        async move {
            let t0 = Instant::now();
            sleep_excluding(Duration::from_secs(10), &credit).await;
            t0.elapsed()
        }
    });
    tokio::time::sleep(Duration::from_secs(4)).await;
    // 30 s waiting on the governor (another task's 429 paused it) do not count.
    task.pause(Duration::from_secs(30));
    assert!(task.acquire(&t).await.is_some());
    assert!(!limit.is_finished());
    let elapsed = limit.await.unwrap();
    assert_eq!(elapsed, Duration::from_secs(40));
    assert_eq!(task.tally().wait_ms, 30_000);
    assert_eq!(task.tally().waits, 1);
}

#[test]
fn the_key_names_provider_and_endpoint_but_never_the_key() {
    let a = key("anthropic", "https://api.anthropic.com/", "sk-ant-secret");
    assert!(
        a.starts_with("anthropic https://api.anthropic.com key:"),
        "{a}"
    );
    assert!(!a.contains("secret"));
    assert_ne!(a, key("anthropic", "https://api.anthropic.com", "sk-other"));
    let gs = Governors::with(4, true);
    assert!(Arc::ptr_eq(&gs.get(&a), &gs.get(&a)));
    assert!(!Arc::ptr_eq(&gs.get(&a), &gs.get("openai x key:1")));
    assert!(enabled_by(None) && enabled_by(Some("on")));
    assert!(!enabled_by(Some("off")) && !enabled_by(Some(" 0 ")));
}
