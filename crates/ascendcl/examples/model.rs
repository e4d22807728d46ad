//! A model as an application holds one — its device, its weights and a stream in one struct, no
//! lifetimes — built on the main thread, handed to a worker thread that runs it, and handed back:
//! `cargo run -p ascendcl --example model`.

use ascendcl::{Device, DeviceBuffer, Runtime, Stream};

struct Model {
    device: Device,
    weights: DeviceBuffer<f32>,
    stream: Stream,
}

impl Model {
    fn load(device: Device, weights: &[f32]) -> ascendcl::Result<Model> {
        Ok(Model {
            weights: device.clone_htod(weights)?,
            stream: device.create_stream()?,
            device,
        })
    }

    /// `out[i] = input[i]` staged through device memory, next to the weights: copy in, copy
    /// out, on the model's stream.
    fn echo(&self, input: &[f32]) -> ascendcl::Result<Vec<f32>> {
        let mut staging = self.device.alloc_zeros::<f32>(input.len())?;
        let mut out = vec![0.0; input.len()];
        self.stream.scope(|s| {
            let x = s.claim(&mut staging);
            s.copy(x, input)?;
            s.copy(&mut out[..], x)
        })?;
        Ok(out)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rt = Runtime::new()?;
    println!("backend: {}", rt.backend().description);
    let weights: Vec<f32> = (0..4096).map(|i| i as f32).collect();
    let model = Model::load(rt.device(0)?, &weights)?;

    let worker = std::thread::spawn(move || -> ascendcl::Result<Model> {
        let input: Vec<f32> = (0..1024).map(|i| (i as f32).sqrt()).collect();
        let out = model.echo(&input)?;
        assert_eq!(out, input);
        println!(
            "worker: {} values copied in and out on device {}",
            out.len(),
            model.device.id()
        );
        Ok(model)
    });
    let model = worker.join().map_err(|_| "the worker panicked")??;
    assert_eq!(model.weights.copy_to_vec()?, weights);
    println!(
        "main: the model came back with its {} weights",
        model.weights.len()
    );
    Ok(())
}
