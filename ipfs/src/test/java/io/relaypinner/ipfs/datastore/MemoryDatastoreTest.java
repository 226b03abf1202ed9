package io.relaypinner.ipfs.datastore;

class MemoryDatastoreTest extends DatastoreContractTest {
  @Override
  protected Datastore open() {
    return new MemoryDatastore();
  }
}
